-- Logos that can be put right (docs/corrections.md): reports and their queue, accounts' overrides,
-- owners' brand claims, the public change log, takedowns, the purge journal every isolate
-- follows, and what scheduled re-checks of discovered icons ask with (ETag, Last-Modified).
CREATE TABLE `brand_changes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`domain` text NOT NULL,
	`change` text NOT NULL,
	`detail` text,
	`method` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `brand_changes_domain_idx` ON `brand_changes` (`domain`,`id`);--> statement-breakpoint
CREATE TABLE `brand_claims` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`domain` text NOT NULL,
	`account_id` text,
	`token` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`method` text,
	`verified_at` integer,
	`checked_at` integer,
	`lapsed_at` integer,
	`prior_name` text,
	`prior_brand_color` text,
	`created_company` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `brand_claims_domain_account_idx` ON `brand_claims` (`domain`,`account_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `brand_claims_verified_idx` ON `brand_claims` (`domain`) WHERE "brand_claims"."status" = 'verified';--> statement-breakpoint
CREATE INDEX `brand_claims_check_idx` ON `brand_claims` (`status`,`checked_at`);--> statement-breakpoint
CREATE TABLE `cache_purges` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`domain` text NOT NULL,
	`created_at` integer NOT NULL,
	`cdn_purged_at` integer,
	CONSTRAINT "cache_purges_domain_check" CHECK(length("cache_purges"."domain") BETWEEN 1 AND 253)
);
--> statement-breakpoint
CREATE INDEX `cache_purges_created_idx` ON `cache_purges` (`created_at`);--> statement-breakpoint
CREATE TABLE `logo_overrides` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` text NOT NULL,
	`domain` text NOT NULL,
	`source_set` text NOT NULL,
	`format` text NOT NULL,
	`renditions` text NOT NULL,
	`width` integer NOT NULL,
	`height` integer NOT NULL,
	`bytes` integer NOT NULL,
	`content_hash` text NOT NULL,
	`tone` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `logo_overrides_account_domain_idx` ON `logo_overrides` (`account_id`,`domain`);--> statement-breakpoint
CREATE TABLE `report_items` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`domain` text NOT NULL,
	`logo_id` integer DEFAULT 0 NOT NULL,
	`status` text DEFAULT 'open' NOT NULL,
	`action` text,
	`note` text,
	`resolved_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `report_items_open_idx` ON `report_items` (`domain`,`logo_id`) WHERE "report_items"."status" = 'open';--> statement-breakpoint
CREATE INDEX `report_items_status_idx` ON `report_items` (`status`,`created_at`);--> statement-breakpoint
CREATE TABLE `reports` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`item_id` integer NOT NULL,
	`kind` text NOT NULL,
	`message` text NOT NULL,
	`account_id` text,
	`via` text NOT NULL,
	`feedback_id` integer,
	`day` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`item_id`) REFERENCES `report_items`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `reports_item_idx` ON `reports` (`item_id`);--> statement-breakpoint
CREATE INDEX `reports_account_idx` ON `reports` (`account_id`,`day`);--> statement-breakpoint
CREATE TABLE `takedowns` (
	`domain` text PRIMARY KEY NOT NULL,
	`primary_domain` text NOT NULL,
	`reason` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `logos` ADD `source_etag` text;--> statement-breakpoint
ALTER TABLE `logos` ADD `source_last_modified` text;--> statement-breakpoint
ALTER TABLE `logos` ADD `verified_at` integer;