"""The Lambda runtime and AWS, as every other room uses them.

`env` reads the function's environment; `aws_clients` makes boto3 clients bounded in time;
`time_limits` is the one timer that ends a whole call in time, however its answer arrives;
`observability` is the logger, the metrics and the tracer.
"""
