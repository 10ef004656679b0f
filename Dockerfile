# The app in one container, as Streamlit's deployment guide ("Deploy Streamlit using Docker") builds it:
#   docker build -t transformer . && docker run -p 8501:8501 transformer
# One container is one Streamlit process; for a class larger than one process serves, run several and put
# nginx in front with deploy/nginx.conf.template (its `server` lines pointing at the containers).
FROM python:3.11-slim

WORKDIR /app

# The app's packages only (requirements-dev.txt is for tests), in their own layer so code changes reuse it.
COPY requirements.txt .
RUN pip3 install --no-cache-dir -r requirements.txt

COPY . .

# Not root: the app needs no privileges.
RUN useradd --create-home --uid 10001 streamlit
USER 10001

EXPOSE 8501

# The slim image has no curl; Python asks the same health endpoint.
HEALTHCHECK CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://localhost:8501/_stcore/health', timeout=5)"]

ENTRYPOINT ["streamlit", "run", "app.py", "--server.port=8501", "--server.address=0.0.0.0"]
