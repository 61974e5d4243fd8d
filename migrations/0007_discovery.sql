CREATE TABLE `discovery_misses` (
	`domain` text PRIMARY KEY NOT NULL,
	`missed_until` integer NOT NULL,
	`reason` text NOT NULL,
	`site_name` text,
	`brand_color` text,
	`checked_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `logos` ADD `source_url` text;--> statement-breakpoint
ALTER TABLE `logos` ADD `fetched_at` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `fallback` text;