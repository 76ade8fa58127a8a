"""The Median key: the shared secret every signature is checked against.

`source` reads it from Secrets Manager (or the Parameters and Secrets extension, `secrets_extension`)
and keeps it through rotation and outages; `local_key` is the development key on your machine.
"""
