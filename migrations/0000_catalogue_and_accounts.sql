CREATE TABLE `companies` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`aliases` text DEFAULT '[]' NOT NULL,
	`brand_color` text,
	`prominence` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	CONSTRAINT "companies_brand_color_check" CHECK("companies"."brand_color" IS NULL OR "companies"."brand_color" GLOB '#[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]')
);
--> statement-breakpoint
CREATE INDEX `companies_name_key_idx` ON `companies` (`name_key`,`prominence`);--> statement-breakpoint
CREATE TABLE `company_domains` (
	`domain` text PRIMARY KEY NOT NULL,
	`company_id` integer NOT NULL,
	`is_primary` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `company_domains_company_idx` ON `company_domains` (`company_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `company_domains_one_primary_idx` ON `company_domains` (`company_id`) WHERE "company_domains"."is_primary" = 1;--> statement-breakpoint
CREATE TABLE `company_tickers` (
	`ticker` text NOT NULL,
	`exchange` text DEFAULT '' NOT NULL,
	`company_id` integer NOT NULL,
	PRIMARY KEY(`ticker`, `exchange`),
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `company_tickers_company_idx` ON `company_tickers` (`company_id`);--> statement-breakpoint
CREATE TABLE `logos` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`variant` text NOT NULL,
	`format` text NOT NULL,
	`original_key` text NOT NULL,
	`master_key` text NOT NULL,
	`grey_key` text NOT NULL,
	`inverted_key` text,
	`inverted_grey_key` text,
	`width` integer NOT NULL,
	`height` integer NOT NULL,
	`bytes` integer NOT NULL,
	`source_hash` text NOT NULL,
	`content_hash` text NOT NULL,
	`tone` text NOT NULL,
	`source_set` text NOT NULL,
	`licence` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "logos_dimensions_check" CHECK("logos"."width" > 0 AND "logos"."height" > 0 AND "logos"."bytes" > 0)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `logos_company_variant_source_idx` ON `logos` (`company_id`,`variant`,`source_set`);--> statement-breakpoint
CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`password_hash` text NOT NULL,
	`plan` text DEFAULT 'free' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_email_unique` ON `accounts` (`email`);--> statement-breakpoint
CREATE TABLE `api_clients` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `api_clients_account_idx` ON `api_clients` (`account_id`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`client_id` text,
	`type` text NOT NULL,
	`key_hash` text NOT NULL,
	`prefix` text NOT NULL,
	`allowed_origins` text DEFAULT '[]' NOT NULL,
	`require_attribution` integer DEFAULT false NOT NULL,
	`per_minute_override` integer,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `api_clients`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_idx` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_account_idx` ON `api_keys` (`account_id`);