ALTER TABLE `companies` ADD `name_source` text DEFAULT 'catalogue' NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `email_confirmed_at` integer;--> statement-breakpoint
-- Companies discovery made before names were earned were named by their sites' titles.
UPDATE `companies` SET `name_source` = 'site' WHERE `prominence` < 0;--> statement-breakpoint
-- Accounts made before emails were confirmed: a paid plan's has proved itself to Stripe; a
-- free one confirms its address as a new one does.
UPDATE `accounts` SET `email_confirmed_at` = `created_at` WHERE `plan` <> 'free';
