"""The exact bytes a Composer receives (R-R-3, R-A-1, R-S-2).

The Composer's input is the canonical JSON of the Verifier-allowed material and nothing else: the confirmed
fact, the Verifier's gap (its description with the unverified claim's statement redacted), the next step the
service rendered from the gap's suggested call, the verdict and the question. The unsupported claim's
statement, the Verifier's rationale, the tool output and the plan never appear in it.
"""

from __future__ import annotations

import json

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.base import AgentRequest
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import Repository

from . import fakes
from .test_fabrication import executor_claiming

UNSUPPORTED = "the orders database is slow"
EXPECTED = (
    b'{"confirmed_facts":[{"claim_id":"c1","critical":true,"statement":"checkout-api pods are OOMKilled"}],'
    b'"evidence_gaps":[{"claim_id":"c2","critical":false,"description":"whether [an unverified claim] was not '
    b'checked","gap_id":"g1"}],"likely_causes":[],"next_steps":[{"claim_ids":["c2"],"step_id":"s1","text":"List '
    b'the Kubernetes events of the affected service (k8s.events namespace=checkout-api)."}],'
    b'"possible_directions":[],"question":"why is checkout-api failing?","verdict":"LOW_CONFID"}'
)


async def _verifier(request: AgentRequest) -> str:
    checks = [
        {
            "claim_id": "c1",
            "classification": "direct_observation",
            "critical": True,
            "evidence_refs": [{"claim_id": "c1"}],
        },
        {"claim_id": "c2", "classification": "unsupported", "critical": True, "evidence_refs": []},
    ]
    gap = {
        "claim_id": "c2",
        "description": f"whether {UNSUPPORTED} was not checked",
        "critical": False,
        "next_calls": [{"tool_name": "k8s.events", "arguments": {"namespace": "checkout-api"}}],
    }
    return json.dumps(
        {
            "claim_checks": checks,
            "verdict": "LOW_CONFID",
            "groundedness_score": 0.5,
            "rationale": "PRIVATE-RATIONALE",
            "evidence_gaps": [gap],
        }
    )


async def test_the_composer_receives_exactly_the_allowed_material(repository: Repository) -> None:
    provider = fakes.pipeline(executor=executor_claiming(UNSUPPORTED), verifier=_verifier)
    run = await Orchestrator(store=repository, provider=provider, tools_for=lambda _: fakes.tools()).run(
        question="why is checkout-api failing?", scenario=""
    )
    (request,) = provider.seen["composer"]
    assert request.input_bytes == EXPECTED
    assert request.input_message is None and request.tools is None
    for absent in (UNSUPPORTED, "PRIVATE-RATIONALE", "limit 512Mi", "restarts", "inv-"):
        assert absent not in request.input_bytes.decode(), absent
    # The prompt wraps those bytes and nothing else of the run.
    assert request.input_bytes.decode() in request.prompt_text
    assert UNSUPPORTED not in request.prompt_text
    assert run.verdict == contracts_pb2.VERDICT_LOW_CONFID
    assert UNSUPPORTED not in run.answer_text
