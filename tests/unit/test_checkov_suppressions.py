"""Checkov's skipped checks (make validate), each beside its resource with the reason a reviewer needs.

Checkov itself runs in `make validate`, in its own venv; this reads what the templates tell it
to skip, so a skip without a reason, or one that hides a real finding, fails with the suite.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from median_lambda.project.sam_config import TEMPLATE, load_template

ROLE_TEMPLATE = Path(__file__).resolve().parents[2] / "pipeline" / "oidc-role.yaml"
CHECK_ID = re.compile(r"^CKV2?_AWS_\d+$")
# Data at rest the stack must encrypt: never skipped, whatever a later change finds convenient.
ENCRYPTION_AT_REST = {
    "CKV_AWS_26": "an SNS topic is encrypted",
    "CKV_AWS_27": "an SQS queue is encrypted",
    "CKV_AWS_19": "an S3 bucket is encrypted",
    "CKV_AWS_7": "a KMS key rotates",
}


def skips(template: Path) -> list[tuple[str, dict[str, Any]]]:
    return [
        (name, skip)
        for name, resource in load_template(template)["Resources"].items()
        for skip in resource.get("Metadata", {}).get("checkov", {}).get("skip", [])
    ]


@pytest.mark.parametrize("template", [TEMPLATE, ROLE_TEMPLATE], ids=["template.yaml", "oidc-role.yaml"])
def test_each_skipped_check_says_why_it_does_not_apply(template: Path) -> None:
    # GIVEN every check the template tells Checkov to skip
    found = skips(template)
    assert found, f"{template.name} skips no check: remove this test's case, or check it is read"
    for resource, skip in found:
        # THEN it names one check, and gives a reason a reviewer can weigh (not "n/a" or "false positive")
        assert CHECK_ID.match(skip["id"]), f"{resource}: {skip}"
        assert len(skip.get("comment", "").split()) >= 15, f"{resource} skips {skip['id']} without saying why"
        # AND no check of encryption at rest is skipped
        assert skip["id"] not in ENCRYPTION_AT_REST, f"{resource} skips the check that {ENCRYPTION_AT_REST[skip['id']]}"
