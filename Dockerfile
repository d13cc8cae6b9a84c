# The Solitaire Arena server. docker-compose.yml runs it beside Redis.
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md ./
COPY shared ./shared
COPY server ./server
COPY client ./client
RUN pip install --no-cache-dir . && useradd --system --no-create-home arena \
    && mkdir /data && chown arena /data

# The embedded store's data directory (without REDIS_URL): a volume, so it outlives the container.
ENV ARENA_DATA_DIR=/data
VOLUME /data
USER arena
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD python -c "import urllib.request, sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=2).status != 200)"
CMD ["solitaire-server", "--host", "0.0.0.0", "--port", "8765", "--log-format", "json"]
