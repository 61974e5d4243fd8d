-- When the account's current subscription was created (Stripe's `created`, Unix seconds): of
-- two paying subscriptions, the later one is the account's (src/billing/events.ts). Rows written
-- before it say nothing (null), and are compared as before until their next event.
ALTER TABLE `billing_accounts` ADD `subscription_created` integer;
