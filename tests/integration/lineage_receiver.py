"""A schema-validating OpenLineage test receiver (a test double, named as such).

No OpenLineage consumer (Marquez) can run here, and the openlineage-python
wheel ships the spec as the classes generated from its JSON schema, not the
JSON files. So each event is validated by rebuilding it from those generated
classes (`openlineage.client.event_v2` and `openlineage.client.generated.*`:
their attrs validators check the UUID, the ISO time, the URIs and the
required fields), serializing it again with the client's own Serde, and
requiring the result to equal what was received: a missing required field, a
wrong type, an unknown field or a facet whose `_schemaURL` is not its spec's
all fail. `Receiver` serves POST /api/v1/lineage on loopback (an ephemeral
port) and keeps the events it validated; `validate` checks one event.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from openlineage.client import event_v2
from openlineage.client.generated import (
    error_message_run,
    input_statistics_input_dataset,
    job_type_job,
    output_statistics_output_dataset,
    parent_run,
    processing_engine_run,
)
from openlineage.client.serde import Serde

RUN_FACETS = {
    "processing_engine": processing_engine_run.ProcessingEngineRunFacet,
    "errorMessage": error_message_run.ErrorMessageRunFacet,
    "parent": parent_run.ParentRunFacet,
}
JOB_FACETS = {"jobType": job_type_job.JobTypeJobFacet}
INPUT_FACETS = {"inputStatistics": input_statistics_input_dataset.InputStatisticsInputDatasetFacet}
OUTPUT_FACETS = {
    "outputStatistics": output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet
}


def _facet(kinds: dict, key: str, body: dict):
    if key not in kinds:
        raise ValueError(f"facet {key!r} is not one knut is known to send")
    cls = kinds[key]
    fields = {k: v for k, v in body.items() if not k.startswith("_")}
    if cls is parent_run.ParentRunFacet:
        fields = {
            "run": parent_run.Run(**fields["run"]),
            "job": parent_run.Job(**fields["job"]),
        }
    facet = cls(**fields, producer=body["_producer"])
    if body["_schemaURL"] != facet._schemaURL:
        raise ValueError(f"facet {key}: _schemaURL {body['_schemaURL']} is not {facet._schemaURL}")
    return facet


def _facets(kinds: dict, d: dict | None) -> dict:
    return {k: _facet(kinds, k, v) for k, v in (d or {}).items()}


def validate(ev: dict) -> None:
    """Raises ValueError/TypeError unless ev is a valid OpenLineage RunEvent."""
    if ev.get("schemaURL") != "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent":
        raise ValueError(f"schemaURL {ev.get('schemaURL')!r}")
    built = event_v2.RunEvent(
        eventType=event_v2.RunState(ev["eventType"]),
        eventTime=ev["eventTime"],
        producer=ev["producer"],
        run=event_v2.Run(runId=ev["run"]["runId"], facets=_facets(RUN_FACETS, ev["run"].get("facets"))),
        job=event_v2.Job(
            namespace=ev["job"]["namespace"],
            name=ev["job"]["name"],
            facets=_facets(JOB_FACETS, ev["job"].get("facets")),
        ),
        inputs=[
            event_v2.InputDataset(
                namespace=d["namespace"],
                name=d["name"],
                facets={},
                inputFacets=_facets(INPUT_FACETS, d.get("inputFacets")),
            )
            for d in ev.get("inputs", [])
        ],
        outputs=[
            event_v2.OutputDataset(
                namespace=d["namespace"],
                name=d["name"],
                facets={},
                outputFacets=_facets(OUTPUT_FACETS, d.get("outputFacets")),
            )
            for d in ev.get("outputs", [])
        ],
    )
    # Serde keeps the empty facet maps the model defaults to, knut leaves
    # some out: compare with empty maps removed on both sides
    again, received = _prune(Serde.to_dict(built)), _prune(json.loads(json.dumps(ev)))
    if again != received:
        raise ValueError(f"event differs from its OpenLineage model:\n{again}\n!=\n{received}")


def _prune(x):
    if isinstance(x, dict):
        return {k: _prune(v) for k, v in x.items() if v != {}}
    if isinstance(x, list):
        return [_prune(v) for v in x]
    return x


class Receiver:
    """POST /api/v1/lineage on 127.0.0.1: events validated, kept in order."""

    def __init__(self, api_key: str | None = None, fail_first: int = 0):
        self.events: list[dict] = []
        self.invalid: list[str] = []
        self.auth: list[str | None] = []
        self.api_key = api_key
        self.fail_first = fail_first  # answer 503 to the first N posts (fault injection)
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                with owner.lock:
                    owner.auth.append(self.headers.get("Authorization"))
                    if owner.fail_first > 0:
                        owner.fail_first -= 1
                        self.send_response(503)
                        self.end_headers()
                        return
                    if self.path != "/api/v1/lineage":
                        self.send_response(404)
                        self.end_headers()
                        return
                    if owner.api_key and self.headers.get("Authorization") != f"Bearer {owner.api_key}":
                        self.send_response(401)
                        self.end_headers()
                        return
                    try:
                        ev = json.loads(body)
                        validate(ev)
                        owner.events.append(ev)
                        code = 201
                    except Exception as e:  # noqa: BLE001 - every failure is a finding
                        owner.invalid.append(f"{type(e).__name__}: {e}")
                        code = 400
                self.send_response(code)
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "Receiver":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
