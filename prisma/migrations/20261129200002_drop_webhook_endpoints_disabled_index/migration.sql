-- The disabled webhook endpoints' partial index (20261128231002) has had no reader since the Overview ranked its
-- clients in one statement (twenty-fifth session): it found an agency's endpoints by account, and now finds them by
-- agency (20261129200001) with `NOT enabled` a condition on those few rows. Online: the delivery worker disables an
-- endpoint that answers 410.
DROP INDEX CONCURRENTLY IF EXISTS "webhook_endpoints_disabled_idx";
