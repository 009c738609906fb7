"""Consumer DAG for tests/integration/test_sync_airflow2.py (an Airflow 2
dag file): scheduled on the dataset knut emits for the people table,
unpaused, and its task prints what knut put into the event's extra."""

import pendulum
from airflow import DAG
from airflow.datasets import Dataset
from airflow.decorators import task

PEOPLE = Dataset("knut://graph/people")  # the default URI: knut://<store name>/<table>

with DAG(dag_id="knut_people_consumer_v2", schedule=[PEOPLE], catchup=False,
         start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), is_paused_upon_creation=False):

    @task
    def consume(triggering_dataset_events=None):
        for uri, events in (triggering_dataset_events or {}).items():
            for ev in events:
                print(uri, ev.extra)

    consume()
