# relabel worker and API server image (used by docker-compose.yml).
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts
COPY src ./src
COPY examples ./examples
USER node
ENV NODE_ENV=production
CMD ["node", "--max-semi-space-size=4", "src/worker.ts"]
