"""The project's build and deploy helpers, run as `python -m scripts.NAME`. Never in the Lambda artifact."""
