# relabel worker and API server image (deploy/ and docker-compose.yml run it).
# TypeScript runs through Node's type stripping: there is no build step, the
# image holds the sources and the production dependencies only.

# Dependencies, installed exactly as locked, without dev dependencies.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# The runtime: Node 24, the dependencies, the sources. Runs as the image's
# unprivileged `node` user (uid 1000).
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# In a container the metrics port is reached from outside it (the worker's own default is loopback).
ENV RELABEL_METRICS_ADDRESS=0.0.0.0
# At most two malloc arenas (WORKER_ENV in src/worker/config.ts): the worker's native threads hold less freed memory.
ENV MALLOC_ARENA_MAX=2
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
COPY examples ./examples
USER node
CMD ["node", "--max-semi-space-size=16", "--heap-growing-percent=25", "src/worker.ts"]
