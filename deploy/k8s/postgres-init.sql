-- Run once by the postgres image when its data directory is new.
-- Through pgbouncer (transaction pooling) a client's startup parameters do not reach Postgres, so
-- the services' 30 s statement timeout is the database's default instead; migrations set their own.
ALTER DATABASE erp SET statement_timeout = '30s';
