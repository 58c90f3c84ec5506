#!/bin/sh
# Sample workload for the docker-compose stack: a loop of small
# transactions on public.orders in the shop database (inserts, updates,
# deletes, now and then an update that changes nothing and a burst), so
# the pipeline has a steady change stream with every Debezium op.
#
#   WORKLOAD_INTERVAL  seconds between transactions (default 1)
#   WORKLOAD_ROUNDS    stop after this many transactions (default 0 = forever)
set -eu

export PGHOST=${PGHOST:-postgres} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres}
export PGPASSWORD=${PGPASSWORD:-postgres} PGDATABASE=${PGDATABASE:-shop}
interval=${WORKLOAD_INTERVAL:-1}
rounds=${WORKLOAD_ROUNDS:-0}

until pg_isready -q; do
  echo "waiting for PostgreSQL at $PGHOST:$PGPORT"
  sleep 1
done

round=0
while [ "$rounds" -eq 0 ] || [ "$round" -lt "$rounds" ]; do
  round=$((round + 1))
  inserts=$((1 + round % 3))
  if [ $((round % 60)) -eq 0 ]; then
    inserts=200 # a burst, to see lag and batch sizes move
  fi
  psql -X -q -v ON_ERROR_STOP=1 <<SQL
BEGIN;
INSERT INTO public.orders (customer, status, amount, note)
SELECT 'customer-' || (random() * 100)::int, 'new', round((5 + random() * 495)::numeric, 2),
       CASE WHEN random() < 0.2 THEN 'express' END
FROM generate_series(1, $inserts);
UPDATE public.orders
   SET status = CASE status WHEN 'new' THEN 'paid' WHEN 'paid' THEN 'shipped' ELSE status END,
       updated_at = now()
 WHERE id IN (SELECT id FROM public.orders WHERE status IN ('new', 'paid') ORDER BY random() LIMIT 3);
UPDATE public.orders SET note = note WHERE id = (SELECT min(id) FROM public.orders);
DELETE FROM public.orders
 WHERE id IN (SELECT id FROM public.orders WHERE status = 'shipped' ORDER BY random() LIMIT 1);
COMMIT;
SQL
  if [ $((round % 30)) -eq 0 ]; then
    echo "round $round: $(psql -X -At -c 'SELECT count(*) FROM public.orders') rows in public.orders"
  fi
  sleep "$interval"
done
