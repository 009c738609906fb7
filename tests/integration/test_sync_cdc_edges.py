"""`knut sync` with an edge-only cdc table: DELETE rows delete edges.

An employment changelog maps rows to WORKS_AT edges (Person -> Company,
the company found by a composite key) and has no vertex step, so a DELETE
row deletes that edge and leaves both endpoint vertices (written by other
tables) alone. The same rounds run into the embedded store and into a real
FalkorDB, and after each round the exact set of WORKS_AT edges (with their
titles), the parallel ADVISES edge and the vertex counts are checked.
"""

from __future__ import annotations

import json

import pytest

CONFIG = """\
store: graph.duckdb
tables:
  people:
    path: people.csv
    vertices: [{labels: [Person], keys: [id]}]
  companies:
    path: companies.csv
    vertices: [{labels: [Company], keys: [country, name]}]
  advising:
    path: advising.csv
    edges:
      - type: ADVISES
        from: {label: Person, keys: {id: person_id}}
        to: {label: Company, keys: {country: company_country, name: company_name}}
  employment_changes:
    path: employment/
    format: csv
    mode: cdc
    edges:
      - type: WORKS_AT
        from: {label: Person, keys: {id: person_id}}
        to: {label: Company, keys: {country: company_country, name: company_name}}
        properties: [title]
"""

HEADER = "_change_type,person_id,company_country,company_name,title\n"

ROUND1 = HEADER + """\
INSERT,1,us,acme,eng
INSERT,1,fr,acme,eng
INSERT,2,us,acme,dev
INSERT,3,us,beta,ops
UPDATE_BEFORE,2,us,acme,dev
UPDATE_AFTER,2,us,acme,lead
"""

# 1 -> fr/acme and 3 -> us/beta go; person 9 and the edge 2 -> fr/acme do
# not exist (harmless); 4 -> us/beta is inserted and deleted in one round
ROUND2 = HEADER + """\
DELETE,1,fr,acme,eng
DELETE,3,us,beta,ops
DELETE,9,us,acme,x
DELETE,2,fr,acme,x
INSERT,4,us,beta,new
DELETE,4,us,beta,new
"""

# a deleted edge comes back with a later INSERT
ROUND3 = HEADER + "INSERT,3,us,beta,ops again\n"


@pytest.fixture
def lake(tmp_path):
    d = tmp_path / "lake"
    (d / "employment").mkdir(parents=True)
    (d / "sync.yml").write_text(CONFIG)
    (d / "people.csv").write_text("id,name\n1,ann\n2,bob\n3,cy\n4,dee\n")
    (d / "companies.csv").write_text("country,name\nus,acme\nfr,acme\nus,beta\n")
    (d / "advising.csv").write_text("person_id,company_country,company_name\n1,fr,acme\n")
    return d


def sync_once(run_knut, lake, *args):
    r = run_knut("sync", "--once", "--config", lake / "sync.yml", *args,
                 env={"KNUT_LOG_FORMAT": "json"})
    assert r.returncode == 0, r.stderr
    recs = [json.loads(x) for x in r.stderr.splitlines() if x.strip().startswith("{")]
    mine = [x for x in recs if x.get("table") == "employment_changes"
            and x["msg"].startswith("table")]
    assert len(mine) == 1 and mine[0]["msg"] == "table synced", r.stderr
    assert mine[0]["errors"] == 0 and mine[0]["deletes"] == 0  # no vertex deleted
    return mine[0]


def run_rounds(run_knut, lake, args, works_at, other):
    """Three rounds; works_at() and other() read the graph back."""
    (lake / "employment" / "0001.csv").write_text(ROUND1)
    sync_once(run_knut, lake, *args)
    assert works_at() == [(1, "fr", "acme", "eng"), (1, "us", "acme", "eng"),
                          (2, "us", "acme", "lead"), (3, "us", "beta", "ops")]
    (lake / "employment" / "0002.csv").write_text(ROUND2)
    log = sync_once(run_knut, lake, *args)
    assert log["files"] == 1 and log["rows"] == 6
    assert works_at() == [(1, "us", "acme", "eng"), (2, "us", "acme", "lead")]
    # the endpoints stay, and so does ADVISES on the pair whose WORKS_AT went
    assert other() == {"people": 4, "companies": 3, "advises": [(1, "fr", "acme")]}
    (lake / "employment" / "0003.csv").write_text(ROUND3)
    sync_once(run_knut, lake, *args)
    assert works_at() == [(1, "us", "acme", "eng"), (2, "us", "acme", "lead"),
                          (3, "us", "beta", "ops again")]
    assert other() == {"people": 4, "companies": 3, "advises": [(1, "fr", "acme")]}


def test_cdc_edge_deletes_embedded_store(run_knut, lake):
    def q(sql):
        r = run_knut("query", "--db", lake / "graph.duckdb", "--format", "json", sql)
        assert r.returncode == 0, r.stderr
        return [json.loads(x) for x in r.stdout.splitlines() if x.strip()]

    def edges(table, cols):
        rows = q(f"SELECT p.id, c.country, c.name{cols} FROM {table} e "
                 "JOIN v_Person p ON p._knut_vid = e._knut_src "
                 "JOIN v_Company c ON c._knut_vid = e._knut_dst ORDER BY ALL")
        return [tuple(r.values()) for r in rows]

    def other():
        n = q("SELECT (SELECT count(*) FROM v_Person) p, (SELECT count(*) FROM v_Company) c")[0]
        return {"people": n["p"], "companies": n["c"], "advises": edges("e_ADVISES", "")}

    run_rounds(run_knut, lake, (), lambda: edges("e_WORKS_AT", ", e.title"), other)


def test_cdc_edge_deletes_falkordb(run_knut, lake, falkordb, tmp_path):
    args = ("--falkordb", f"redis://{falkordb.host}:{falkordb.port}", "--graph", "g",
            "--ledger", tmp_path / "ledger.json")

    def dec(row):
        return tuple(x.decode() if isinstance(x, bytes) else x for x in row)

    def edges(type_, cols):
        rows = falkordb.query("g", f"MATCH (p:Person)-[e:{type_}]->(c:Company) "
                              f"RETURN p.id, c.country, c.name{cols} "
                              "ORDER BY p.id, c.country, c.name")[1]
        return [dec(r) for r in rows]

    def other():
        n = falkordb.query("g", "MATCH (p:Person) WITH count(p) AS p "
                           "MATCH (c:Company) RETURN p, count(c)")[1][0]
        return {"people": n[0], "companies": n[1], "advises": edges("ADVISES", "")}

    run_rounds(run_knut, lake, args, lambda: edges("WORKS_AT", ", e.title"), other)
    assert not (lake / "graph.duckdb").exists()  # everything went to FalkorDB
