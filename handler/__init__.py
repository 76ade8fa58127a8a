"""The function's entry point, `handler.app.lambda_handler` (template.yaml's Handler)."""
