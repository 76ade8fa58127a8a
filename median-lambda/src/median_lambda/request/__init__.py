"""The request path: what arrives and what goes back.

`events` reads the event shapes API Gateway and Function URLs send (method, headers, body);
`signature` checks Median's HMAC header; `responses` shapes every answer, success or error.
Below everything but the protocol: nothing here knows a tool, the key or AWS.
"""
