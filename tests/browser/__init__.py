"""Browser tests: the course in JupyterLab, driven in headless Chromium."""
