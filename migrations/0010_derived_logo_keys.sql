-- Logo rows shed what they can derive, so that 17 million logos fit one D1 database with room to
-- spare (README, "The catalogue at scale"):
-- 1. master_key and original_key are no longer stored. Every logo row was written with
--    logos/<primary domain>/<variant>.<source set>.<first 16 hex digits of content_hash>.png and
--    ….original.<format> (src/images/keys.ts), and a company's primary domain never changes: the
--    readers derive both keys from the row and the primary domain they read with it.
-- 2. source_hash and content_hash hold their 32 bytes rather than 64 hex digits.
-- Nothing is lost: before the table is rebuilt, every logo's stored keys are compared with the
-- derivation and every hash with its bytes read back as hex, and one that differs fails the
-- CHECK below, so the migration applies nothing. The rebuilt table keeps ids, every other
-- column, the unique index and the foreign key; no trigger or view refers to logos. Its
-- AUTOINCREMENT counter is carried over, so an id of a removed logo is never given again.
-- 3. A trigger keeps the primary domain of a company with logos as it is.
CREATE TABLE `logos_derivation_check` (
	`id` integer PRIMARY KEY,
	`derived` integer NOT NULL,
	CONSTRAINT `logos_stored_keys_match_derivation` CHECK (`derived` = 1)
);
--> statement-breakpoint
INSERT INTO `logos_derivation_check` (`id`, `derived`)
SELECT l.`id`, coalesce(
	lower(hex(unhex(l.`source_hash`))) = l.`source_hash` AND length(unhex(l.`source_hash`)) = 32
	AND lower(hex(unhex(l.`content_hash`))) = l.`content_hash` AND length(unhex(l.`content_hash`)) = 32
	AND l.`master_key` = 'logos/' || d.`domain` || '/' || l.`variant` || '.' || l.`source_set` || '.' || lower(hex(substr(unhex(l.`content_hash`), 1, 8))) || '.png'
	AND l.`original_key` = 'logos/' || d.`domain` || '/' || l.`variant` || '.' || l.`source_set` || '.' || lower(hex(substr(unhex(l.`content_hash`), 1, 8))) || '.original.' || l.`format`,
	0)
FROM `logos` l LEFT JOIN `company_domains` d ON d.`company_id` = l.`company_id` AND d.`is_primary` = 1;
--> statement-breakpoint
DROP TABLE `logos_derivation_check`;--> statement-breakpoint
CREATE TABLE `__new_logos` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`variant` text NOT NULL,
	`format` text NOT NULL,
	`renditions` text DEFAULT '{"version":0,"light":false,"dark":false,"plain":"master","vector":false}' NOT NULL,
	`width` integer NOT NULL,
	`height` integer NOT NULL,
	`bytes` integer NOT NULL,
	`source_hash` blob NOT NULL,
	`content_hash` blob NOT NULL,
	`tone` text NOT NULL,
	`source_set` text NOT NULL,
	`licence` text NOT NULL,
	`source_url` text,
	`fetched_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "logos_dimensions_check" CHECK("__new_logos"."width" > 0 AND "__new_logos"."height" > 0 AND "__new_logos"."bytes" > 0),
	CONSTRAINT "logos_hashes_check" CHECK(typeof("__new_logos"."source_hash") = 'blob' AND length("__new_logos"."source_hash") = 32 AND typeof("__new_logos"."content_hash") = 'blob' AND length("__new_logos"."content_hash") = 32)
);
--> statement-breakpoint
INSERT INTO `__new_logos`("id", "company_id", "variant", "format", "renditions", "width", "height", "bytes", "source_hash", "content_hash", "tone", "source_set", "licence", "source_url", "fetched_at", "created_at", "updated_at") SELECT "id", "company_id", "variant", "format", "renditions", "width", "height", "bytes", unhex("source_hash"), unhex("content_hash"), "tone", "source_set", "licence", "source_url", "fetched_at", "created_at", "updated_at" FROM `logos` ORDER BY "id";--> statement-breakpoint
DELETE FROM `sqlite_sequence` WHERE `name` = '__new_logos';--> statement-breakpoint
INSERT INTO `sqlite_sequence` (`name`, `seq`) SELECT '__new_logos', `seq` FROM `sqlite_sequence` WHERE `name` = 'logos';--> statement-breakpoint
DROP TABLE `logos`;--> statement-breakpoint
ALTER TABLE `__new_logos` RENAME TO `logos`;--> statement-breakpoint
CREATE UNIQUE INDEX `logos_company_variant_source_idx` ON `logos` (`company_id`,`variant`,`source_set`);--> statement-breakpoint
-- A company's primary domain names the R2 keys of its logos: it is not moved, renamed or removed
-- while the company has logos (removing the company itself removes its logos with it).
CREATE TRIGGER `company_domains_primary_update` BEFORE UPDATE OF `domain`, `company_id`, `is_primary` ON `company_domains`
WHEN old.`is_primary` AND (new.`domain` <> old.`domain` OR new.`company_id` <> old.`company_id` OR NOT new.`is_primary`) BEGIN
	SELECT RAISE(ABORT, 'the primary domain of a company with logos names their R2 keys and does not change')
	WHERE EXISTS (SELECT 1 FROM `logos` WHERE `company_id` = old.`company_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `company_domains_primary_delete` BEFORE DELETE ON `company_domains` WHEN old.`is_primary` BEGIN
	SELECT RAISE(ABORT, 'the primary domain of a company with logos names their R2 keys and does not change')
	WHERE EXISTS (SELECT 1 FROM `logos` WHERE `company_id` = old.`company_id`)
		AND EXISTS (SELECT 1 FROM `companies` WHERE `id` = old.`company_id`);
END;
