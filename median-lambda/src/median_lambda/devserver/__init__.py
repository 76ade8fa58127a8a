"""The local development server behind `make serve`. Never part of the Lambda artifact."""
