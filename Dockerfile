# syntax=docker/dockerfile:1
#
# One image for all five Switchyard services and the CLI.
#
#   docker build -t switchyard:dev .                            # runs the gateway by default
#   docker build -t switchyard-planner:dev --build-arg SERVICE=planner .
#   docker run -e SERVICE=executor switchyard:dev               # or pick the service at run time
#   docker run switchyard:dev node dist/tools/cli/switchyard.js migrate
#
# The image keeps the repository layout under /app (dist/... next to libs/server/db/prisma/migrations)
# because the migrate CLI finds its SQL by walking up from its own location.
# Every service listens on PORT=3000 inside its container (override with -e PORT=...).

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- deps: every dependency, dev ones included, from the lockfile ----------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Nothing in this project relies on install scripts (Prisma runs on its JS/WASM engine).
RUN npm ci --ignore-scripts --no-audit --no-fund

# ---- build: prisma generate + tsc + tsc-alias into dist/ -------------------------------------------
FROM deps AS build
COPY tsconfig.base.json tsconfig.build.json prisma.config.ts ./
COPY apps ./apps
COPY libs ./libs
COPY tools ./tools
COPY plugins ./plugins
RUN npm run build

# ---- runtime: production dependencies, the generated Prisma client, dist/ and the migrations --------
FROM ${NODE_IMAGE} AS runtime
# bubblewrap confines execute_command (see docs/deployment.md: it needs user namespaces).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
# The client generated from libs/server/db/prisma/schema.prisma replaces the stub npm installed.
COPY --from=build /app/node_modules/.prisma ./node_modules/.prisma
COPY --from=build /app/node_modules/@prisma/client ./node_modules/@prisma/client
COPY --from=build /app/dist ./dist
COPY libs/server/db/prisma/migrations ./libs/server/db/prisma/migrations
COPY tools/service-node-flags.json ./tools/service-node-flags.json
# The plugin bundles shipped with the platform: a manifest and one self-contained server file each.
COPY --from=build /app/plugins/office/switchyard-plugin.json ./plugins/office/switchyard-plugin.json
COPY --from=build /app/plugins/office/dist/server.cjs ./plugins/office/dist/server.cjs

# Declared late so that every layer above is shared by the five per-service builds.
# One of: gateway, planner, executor, tool-registry, scheduler.
ARG SERVICE=gateway
ENV SERVICE=${SERVICE}

# Files stay owned by root and read-only for the process; the tool workspace is the one place the
# built-in file tools and execute_command may write (mount a volume there to keep it).
# /shared holds uploads, installed plugins and market files (FILES_DIR, PLUGINS_DIR, MARKET_DIR in
# docker-compose.yml and k8s/): a named volume mounted there starts out owned by node.
RUN mkdir -p /workspace /shared && chown node:node /workspace /shared
ENV WORKSPACE_DIR=/workspace
USER node
EXPOSE 3000
STOPSIGNAL SIGTERM
# Liveness only: /healthz answers 200 while the process runs; orchestrators probe /readyz themselves.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# `exec` replaces the shell, so node runs as PID 1 and SIGTERM reaches the service's graceful shutdown.
# Node's flags are ${SERVICE}'s in tools/service-node-flags.json (docs/deployment.md, "Node flags").
CMD ["sh", "-c", "exec node $(node -p \"require('./tools/service-node-flags.json')[process.env.SERVICE].join(' ')\") \"dist/apps/${SERVICE}/src/main.js\""]
