# An operator's container image: one self-contained ESM bundle (operators/<name>/dist/main.js, with dist/chunks/: the
# code it loads only when first used, e.g. @kubernetes/client-node for exec plugins) on Node.js 24, no
# node_modules. One Dockerfile for every operator; OPERATOR names the directory under operators/ (the workspace is
# @capstan/<name>-operator). Build it from the repository root:
#   docker build --build-arg OPERATOR=etcd -t "$(npx capstan chart image charts/etcd-operator)" .
#   docker build --build-arg OPERATOR=vault -t "$(npx capstan chart image charts/vault-operator)" .
#   docker build --build-arg OPERATOR=prometheus -t "$(npx capstan chart image charts/prometheus-operator)" .
# (the reference each chart runs by default, ghcr.io/capstan-dev/capstan/<name>-operator:<appVersion>, which the
# release workflow pushes for linux/amd64 and linux/arm64: .github/workflows/release.yml, docs/releasing.md).
# The build stage needs the workspace: the root lockfile, @capstan/core, @capstan/backup (the backup steps the etcd
# and Vault operators bundle), @capstan/promql (the PromQL check the Prometheus operator bundles; @capstan/cli
# depends on it) and @capstan/cli (the shared tsup build each operator's tsup.config.ts imports). The image runs as uid 1000 and writes nothing to its filesystem, so it
# works with readOnlyRootFilesystem: true. (Without Docker, e2e/images/<name>-operator/build.sh builds the same
# image for the local cluster.)

# The bundle is plain JavaScript: it is built once on the builder's own platform, and each target platform's image
# only copies it onto that platform's Node.js (no emulated npm ci in a multi-platform build).
FROM --platform=$BUILDPLATFORM node:24-bookworm AS build
ARG OPERATOR=etcd
WORKDIR /src
# Manifests first, so the dependency layer is reused until they change. npm ci tolerates the workspaces that are
# not copied (packages/testing, e2e, the other operators).
COPY package.json package-lock.json tsconfig.base.json ./
COPY packages/core/package.json packages/core/
COPY packages/backup/package.json packages/backup/
COPY packages/promql/package.json packages/promql/
COPY packages/cli/package.json packages/cli/
COPY operators/${OPERATOR}/package.json operators/${OPERATOR}/
RUN npm ci --no-audit --no-fund
COPY packages/core/ packages/core/
COPY packages/backup/ packages/backup/
COPY packages/promql/ packages/promql/
COPY packages/cli/ packages/cli/
COPY operators/${OPERATOR}/ operators/${OPERATOR}/
RUN npm run build -w @capstan/core -w @capstan/backup -w @capstan/promql -w @capstan/cli -w "@capstan/${OPERATOR}-operator"

FROM node:24-bookworm-slim
ARG OPERATOR=etcd
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/operators/${OPERATOR}/dist/main.js /src/operators/${OPERATOR}/dist/main.js.map /app/
COPY --from=build /src/operators/${OPERATOR}/dist/chunks/ /app/chunks/
# The image's user "node" (uid 1000), numeric so the kubelet can check runAsNonRoot.
USER 1000:1000
EXPOSE 8080 8081
# --max-semi-space-size=4 (MiB): a young generation of 4 MiB per semi-space (by default V8 sizes it from the
# heap limit, up to 64 MiB) keeps an informer's initial list from growing the heap: peak RSS 111 instead of
# 134 MiB with 10,000 cached ConfigMaps, 195 instead of 318 with 50,000, and a faster sync
# (docs/performance.md, "Node.js heap flags").
# --wasm-tiering-budget=2147483647: V8 keeps WebAssembly on its baseline code instead of optimizing it once it ran
# enough. An operator's only WebAssembly is undici's HTTP/1.1 parser (every API request); optimizing it left ~10 MiB
# in a compiler thread's memory for the life of the process. With the budget: idle steady RSS 11-12 MiB lower, CPU
# per request the same (docs/performance.md, "WebAssembly left on the baseline compiler").
ENTRYPOINT ["node", "--max-semi-space-size=4", "--wasm-tiering-budget=2147483647", "/app/main.js"]
