-- Sample source schema for the docker-compose stack. The PostgreSQL
-- container runs this once, when its data volume is created.
-- Debezium captures public.orders into the Kafka topic shop.public.orders
-- (topic.prefix "shop" in deploy/connect/shop-postgres.json).

CREATE TABLE public.orders (
    id         bigserial PRIMARY KEY,
    customer   text          NOT NULL,
    status     text          NOT NULL DEFAULT 'new',
    amount     numeric(12,2) NOT NULL,
    note       text,
    created_at timestamptz   NOT NULL DEFAULT now(),
    updated_at timestamptz   NOT NULL DEFAULT now()
);

-- Full before images on updates and deletes (the default sends only the
-- key on deletes; lakemirror handles both).
ALTER TABLE public.orders REPLICA IDENTITY FULL;

-- Rows that exist before the connector starts: Debezium's initial snapshot
-- reads them (op "r").
INSERT INTO public.orders (customer, status, amount, note)
SELECT 'customer-' || (g % 25),
       (ARRAY['new', 'paid', 'shipped'])[1 + g % 3],
       round((10 + g * 7.35)::numeric, 2),
       CASE WHEN g % 4 = 0 THEN 'gift wrap' END
FROM generate_series(1, 50) AS g;
