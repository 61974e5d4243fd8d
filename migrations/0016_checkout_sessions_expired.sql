-- When a checkout session was found expired at Stripe (src/billing/sessions.ts): it can no
-- longer be paid, so it no longer keeps its account from being deleted.
ALTER TABLE `checkout_sessions` ADD `expired_at` integer;
