# hopper's container image. No step here that the test suite does not also run:
# tests/server/test_container.py builds the wheel, installs it into a clean
# virtualenv, starts `hopper serve` from it and probes /health, as below.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY server ./server
RUN pip wheel --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin hopper
COPY --from=build /wheels /wheels
RUN python -m venv /opt/hopper \
    && /opt/hopper/bin/pip install --no-cache-dir "$(ls /wheels/hopper_sqs-*.whl)[fast]" \
    && rm -rf /wheels
ENV PATH=/opt/hopper/bin:$PATH \
    PYTHONUNBUFFERED=1
USER hopper
EXPOSE 9324
# PostgreSQL: pass HOPPER_DATABASE_URL (see the README's compose example).
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9324/health', timeout=2)"]
ENTRYPOINT ["hopper"]
CMD ["serve", "--host", "0.0.0.0", "--port", "9324"]
