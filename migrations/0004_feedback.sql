CREATE TABLE `feedback` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` text,
	`client_id` text,
	`oauth_client_id` text,
	`day` integer NOT NULL,
	`category` text NOT NULL,
	`message` text NOT NULL,
	`domain` text,
	`logo_id` integer,
	`tool` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`client_id`) REFERENCES `api_clients`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "feedback_category_check" CHECK("feedback"."category" IN ('data_quality', 'bug', 'feature_request', 'other'))
);
--> statement-breakpoint
CREATE INDEX `feedback_client_day_idx` ON `feedback` (`client_id`,`day`);