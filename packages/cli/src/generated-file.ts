// One file `capstan crd` generates: a leaf module, so crd-files.ts and chart-docs.ts never import one another for it.

/** One generated file: its absolute path and the text it must hold. */
export interface GeneratedFile {
  path: string;
  content: string;
}
