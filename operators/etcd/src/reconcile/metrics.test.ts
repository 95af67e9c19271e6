// The etcd operator's gauges label the EtcdCluster object_namespace/object_name, never namespace/name: scraped
// without honorLabels, Prometheus would rename an object's `namespace` to `exported_namespace` (the target's wins).
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { EtcdOperatorMetrics } from "./metrics.ts";

describe("EtcdOperatorMetrics", () => {
  it("labels each cluster's series object_namespace and object_name, and drops them on forget", async () => {
    const registry = new Registry();
    const metrics = new EtcdOperatorMetrics(registry);
    metrics.observe("apps", "main", { healthy: 2, unhealthy: 1, learner: 0 }, true, false);
    metrics.countStep({ namespace: "apps", name: "main" }, "AddLearner");
    const text = await registry.metrics();
    expect(text).toContain(
      'capstan_etcd_cluster_members{object_namespace="apps",object_name="main",state="unhealthy"} 1',
    );
    expect(text).toContain('capstan_etcd_cluster_quorum{object_namespace="apps",object_name="main"} 1');
    expect(text).toContain('capstan_etcd_cluster_has_leader{object_namespace="apps",object_name="main"} 0');
    expect(text).toContain(
      'capstan_etcd_membership_changes_total{object_namespace="apps",object_name="main",step="AddLearner"} 1',
    );
    // No series carries a label Prometheus would rename.
    expect(text).not.toMatch(/[{,](namespace|name)="/);

    metrics.forget("apps", "main");
    expect(await registry.getSingleMetricAsString("capstan_etcd_cluster_quorum")).not.toContain(
      "object_name=",
    );
  });

  it("keeps the newest successful backup's time per cluster and counts failed backups", async () => {
    const registry = new Registry();
    const metrics = new EtcdOperatorMetrics(registry);
    metrics.backupSucceeded("apps", "main", new Date("2026-12-01T10:00:00Z"));
    // An older backup reconciled later (after a restart, in any order) does not move the time back.
    metrics.backupSucceeded("apps", "main", new Date("2026-12-01T09:00:00Z"));
    metrics.backupSucceeded("apps", "other", new Date("2026-12-01T08:00:00Z"));
    metrics.backupFailed("apps", "main");
    metrics.backupFailed("apps", "main");
    const text = await registry.metrics();
    expect(text).toContain(
      'capstan_etcd_backup_last_success_timestamp_seconds{object_namespace="apps",object_name="main"} 1796119200',
    );
    expect(text).toContain(
      'capstan_etcd_backup_last_success_timestamp_seconds{object_namespace="apps",object_name="other"} 1796112000',
    );
    expect(text).toContain(
      'capstan_etcd_backup_failures_total{object_namespace="apps",object_name="main"} 2',
    );
    // A cluster with backups and no failure reads 0 failures, not "no data" (a dashboard panel shows 0).
    expect(text).toContain(
      'capstan_etcd_backup_failures_total{object_namespace="apps",object_name="other"} 0',
    );
  });

  it("forgets a deleted cluster's backup and step series too, and only that cluster's", async () => {
    const registry = new Registry();
    const metrics = new EtcdOperatorMetrics(registry);
    for (const name of ["gone", "kept"]) {
      metrics.backupSucceeded("apps", name, new Date("2026-12-01T10:00:00Z"));
      metrics.backupFailed("apps", name);
      metrics.countStep({ namespace: "apps", name }, "AddLearner");
      metrics.countStep({ namespace: "apps", name }, "PromoteLearner");
    }
    metrics.forget("apps", "gone");
    const text = await registry.metrics();
    expect(text).not.toContain('object_name="gone"');
    for (const family of [
      "capstan_etcd_backup_last_success_timestamp_seconds",
      "capstan_etcd_backup_failures_total",
      "capstan_etcd_membership_changes_total",
    ]) {
      expect(text).toMatch(new RegExp(`^${family}\\{object_namespace="apps",object_name="kept"`, "m"));
    }
    // A cluster of the same name created again starts afresh: an older backup's time is recorded again.
    metrics.backupSucceeded("apps", "gone", new Date("2026-12-01T09:00:00Z"));
    expect(
      await registry.getSingleMetricAsString("capstan_etcd_backup_last_success_timestamp_seconds"),
    ).toContain(
      'capstan_etcd_backup_last_success_timestamp_seconds{object_namespace="apps",object_name="gone"} 1796115600',
    );
  });
  it("exports each certificate's notAfter and warning start, and drops the series of a certificate no longer used or a deleted cluster", async () => {
    const registry = new Registry();
    const metrics = new EtcdOperatorMetrics(registry);
    const notAfter = new Date("2026-12-01T10:00:00Z");
    const warnFrom = new Date("2026-11-24T10:00:00Z");
    metrics.certificatesObserved("apps", "main", [
      { secret: "mine", key: "tls.crt", source: "secretRef", notAfter, warnFrom },
      {
        secret: "mine",
        key: "ca.crt",
        source: "secretRef",
        notAfter: new Date("2030-01-01T00:00:00Z"),
        warnFrom: new Date("2029-12-18T00:00:00Z"),
      },
    ]);
    metrics.certificatesObserved("apps", "other", [
      { secret: "other-ca", key: "tls.crt", source: "operatorManaged", notAfter, warnFrom },
    ]);
    const family = "capstan_etcd_certificate_expiry_timestamp_seconds";
    const warning = "capstan_etcd_certificate_warning_timestamp_seconds";
    expect(await registry.getSingleMetricAsString(family)).toContain(
      `${family}{object_namespace="apps",object_name="main",secret="mine",key="tls.crt",source="secretRef"} 1796119200`,
    );
    expect(await registry.getSingleMetricAsString(warning)).toContain(
      `${warning}{object_namespace="apps",object_name="main",secret="mine",key="tls.crt",source="secretRef"} 1795514400`,
    );
    // The Secret replaced by another (spec edited, a member gone): the old one's series go.
    metrics.certificatesObserved("apps", "main", [
      { secret: "new", key: "tls.crt", source: "secretRef", notAfter, warnFrom },
    ]);
    for (const f of [family, warning]) {
      const text = await registry.getSingleMetricAsString(f);
      expect(text).not.toContain('secret="mine"');
      expect(text).toContain('secret="new"');
    }
    metrics.forget("apps", "main");
    for (const f of [family, warning]) {
      const text = await registry.getSingleMetricAsString(f);
      expect(text).not.toContain('object_name="main"');
      expect(text).toContain('object_name="other"');
      expect(text).not.toMatch(/[{,](namespace|name)="/);
    }
  });

  it("forgets every series of a deleted cluster and only that cluster's, never a schedule's of the same name", async () => {
    const registry = new Registry();
    const metrics = new EtcdOperatorMetrics(registry);
    const notAfter = new Date("2026-12-01T10:00:00Z");
    const warnFrom = new Date("2026-11-24T10:00:00Z");
    for (const name of ["gone", "kept"]) {
      metrics.observe("apps", name, { healthy: 3, unhealthy: 0, learner: 1 }, true, true);
      metrics.countStep({ namespace: "apps", name }, "AddLearner");
      metrics.countStep({ namespace: "apps", name }, "UpgradeMember");
      metrics.backupSucceeded("apps", name, notAfter);
      metrics.backupFailed("apps", name);
      metrics.certificatesObserved("apps", name, [
        { secret: `${name}-tls`, key: "tls.crt", source: "operatorManaged", notAfter, warnFrom },
      ]);
      metrics.scheduleObserved("apps", name, false);
    }
    metrics.forget("apps", "gone");
    const text = await registry.metrics();
    // An EtcdBackupSchedule is another object: a cluster's deletion leaves a schedule's series of the same name.
    const schedule = "capstan_etcd_backup_schedule_stale";
    expect(text).toContain(`${schedule}{object_namespace="apps",object_name="gone"} 0`);
    expect(text.replace(`${schedule}{object_namespace="apps",object_name="gone"} 0`, "")).not.toContain(
      'object_name="gone"',
    );
    for (const family of [
      "capstan_etcd_cluster_members",
      "capstan_etcd_cluster_quorum",
      "capstan_etcd_cluster_has_leader",
      "capstan_etcd_membership_changes_total",
      "capstan_etcd_backup_last_success_timestamp_seconds",
      "capstan_etcd_backup_failures_total",
      "capstan_etcd_certificate_expiry_timestamp_seconds",
      "capstan_etcd_certificate_warning_timestamp_seconds",
    ]) {
      expect(text).toMatch(new RegExp(`^${family}\\{object_namespace="apps",object_name="kept"`, "m"));
    }
    metrics.forgetSchedule("apps", "gone");
    expect(await registry.metrics()).not.toContain('object_name="gone"');
  });
});
