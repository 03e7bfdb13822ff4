# syntax=docker/dockerfile:1
#
# One image per service, built from the repository root:
#   docker build --build-arg SERVICE=gateway -t erp-gateway .
# The default command runs the service (`node dist/main.js`); `node dist/migrate.js` migrates its
# schema and exits (the chart's hook Job). Both paths are relative to the working directory,
# /app/services/$SERVICE. Every image also carries the admin CLI, `node /app/services/admin/dist/cli.js`
# (`npm run admin` of a checkout): the chart's audit CronJob runs `audit` with it. No HEALTHCHECK: Kubernetes probes the ops port (/healthz, /readyz).

# Node 24 LTS, pinned by digest so a rebuild gets the same base (24.18.0). The tests run on the same
# Node version (.ci/run). To bump: pick the new 24.x, read its digest with
#   docker buildx imagetools inspect node:24-bookworm-slim      (the "Digest:" of the index)
# and change it here and NODE_VERSION in .ci/run together.
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

# Only the npm manifests, so that dependency layers stay cached while sources change.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN mkdir /manifests \
 && find . -path ./node_modules -prune -o \( -name package.json -o -name package-lock.json -o -name .npmrc \) -print \
    | tar -cf - -T - | tar -xf - -C /manifests

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY --from=manifests /manifests/ ./
RUN npm ci --no-audit --no-fund
COPY . .
ARG SERVICE
RUN test -n "$SERVICE" && test -f "services/$SERVICE/src/main.ts" \
 || { echo "build arg SERVICE must name a folder under services/ (got '$SERVICE')" >&2; exit 1; }
# Builds the service, the admin CLI and the libs they reference, nothing else.
RUN npx tsc -b "services/$SERVICE/tsconfig.json" services/admin/tsconfig.json
# Keep only what runs: package.json (for the exports map) and dist/ of each built package, the admin CLI's included.
RUN for dir in libs/* "services/$SERVICE" services/admin; do \
      if [ -d "$dir/dist" ]; then \
        mkdir -p "/out/$dir" && cp "$dir/package.json" "/out/$dir/" && cp -r "$dir/dist" "/out/$dir/"; \
        rm -f "/out/$dir/dist/.tsbuildinfo"; \
      fi; \
    done \
 && cp package.json /out/

# Production dependencies of this one service and of the admin CLI (and of the libs they link), no dev dependencies.
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY --from=manifests /manifests/ ./
ARG SERVICE
RUN npm ci --omit=dev --no-audit --no-fund --workspace "services/$SERVICE" --workspace services/admin \
 && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
# tini is PID 1: it forwards SIGTERM to node (graceful shutdown) and reaps zombies.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ARG SERVICE
# The heap ceiling sits well under the chart's memory limit (384Mi): without it V8 sizes the heap
# for the whole node's memory and a busy process lets garbage pile up to hundreds of MB before a
# full collection (the benchmark runs the services with the same options). Node 24's young
# generation grows to semi-spaces of 32 MB and more, which took services from about 135 to 250 MB
# of RSS under the benchmark's load; semi-spaces of 8 MB keep the busiest under 180 MB at the same
# throughput (16 MB: about 210 MB).
# Buffers live outside V8's heap, in glibc's malloc. Once a large one (a 330 KB page of sales
# arriving from the bus) is freed, glibc raises its threshold for mapping such blocks apart and
# keeps later ones in its heap, which then only grows: the gateway held 74 MB there under 10
# connections of 200-sale pages with 13 MB of buffers alive. A fixed threshold returns each large
# block when it is freed, and two arenas stop each thread growing one of its own.
ENV NODE_ENV=production \
    NODE_OPTIONS="--enable-source-maps --max-old-space-size=192 --max-semi-space-size=8" \
    MALLOC_MMAP_THRESHOLD_=131072 \
    MALLOC_ARENA_MAX=2 \
    SERVICE=${SERVICE}
LABEL org.opencontainers.image.title="erp-${SERVICE}" \
      org.opencontainers.image.description="ERP partner API: ${SERVICE} service"
# Owned by root and not writable by the runtime user: the root filesystem can be mounted
# read-only, and the process cannot change its own code either way.
COPY --from=prod-deps /app/node_modules /app/node_modules
COPY --from=build /out/ /app/
WORKDIR /app/services/${SERVICE}
# Numeric, so that Kubernetes can check runAsNonRoot against the image.
USER 1000:1000
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
