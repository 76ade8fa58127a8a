"""The tools `make bench` serves, through $MEDIAN_TOOLS_PACKAGE: Median's own example, `orderStatus`.

The bench's own, so it measures the same endpoint whatever a user keeps in `tools/`.
"""
