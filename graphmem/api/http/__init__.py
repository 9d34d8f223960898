"""HTTP concerns: the Starlette app, uvicorn, API keys, bodies, limits and fair shares."""
