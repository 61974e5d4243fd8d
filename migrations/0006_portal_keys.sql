ALTER TABLE `api_keys` ADD `last_four` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `last_used_at` integer;