"""Consumer DAGs for tests/integration/test_pipeline_airflow.py (an airflow
dag file): each is scheduled on the asset `knut pipeline run` emits for one
dataset (asset_prefix + dataset name), unpaused, and prints the extra."""

from airflow.sdk import DAG, Asset, task

ORDERS = Asset("knut://shop/orders")       # the default prefix: knut://<pipeline name>/
BAD = Asset("knut://shop/bad")             # a dataset whose flow fails: never an event
TOTALS = Asset("x-pipe://sales/totals")    # asset_prefix: x-pipe://sales/
ON_SPARK = Asset("knut://sparkshop/totals")  # a run on Spark (--backend spark)

for dag_id, asset in (("knut_pipe_orders_consumer", ORDERS), ("knut_pipe_bad_consumer", BAD),
                      ("knut_pipe_totals_consumer", TOTALS),
                      ("knut_pipe_spark_consumer", ON_SPARK)):
    with DAG(dag_id=dag_id, schedule=[asset], catchup=False, is_paused_upon_creation=False):

        @task
        def consume(triggering_asset_events=None):
            for a, events in (triggering_asset_events or {}).items():
                for ev in events:
                    print(a.uri, ev.extra)

        consume()
