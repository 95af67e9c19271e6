// A rendered Kubernetes object as the chart checks see it: a leaf module, so chart.ts and chart-monitoring.ts never
// import one another for it.

/** A rendered Kubernetes object, as parsed from `helm template`. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [key: string]: unknown;
}
