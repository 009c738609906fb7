"""Consumer DAGs for tests/integration/test_sync_airflow.py (an airflow dag
file): each is scheduled on the asset knut emits for one table, unpaused,
and its task prints what knut put into the event's extra."""

from airflow.sdk import DAG, Asset, task

PEOPLE = Asset("knut://graph/people")          # the default URI: knut://<store name>/<table>
EMPLOYMENT = Asset("x-lake://hr/employment")   # set with `asset:` in the sync config

for dag_id, asset in (("knut_people_consumer", PEOPLE), ("knut_employment_consumer", EMPLOYMENT)):
    with DAG(dag_id=dag_id, schedule=[asset], catchup=False, is_paused_upon_creation=False):

        @task
        def consume(triggering_asset_events=None):
            for a, events in (triggering_asset_events or {}).items():
                for ev in events:
                    print(a.uri, ev.extra)

        consume()
