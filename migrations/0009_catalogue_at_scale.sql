-- The catalogue at the spec's size: 17 million logos in one D1 database, and search that reads
-- a bounded number of rows whatever that size (README, "The catalogue at scale").
--
-- 1. Names are indexed in the order search ranks them (better known first), so that the first
--    rows of a name's range are the ones shown.
-- 2. search_prefixes: for every prefix of one to three characters, the best-known companies it
--    leads to, in lists of at most 64 (SEARCH_PREFIX_LIST_SIZE in src/catalogue/searchPrefixes.ts,
--    which keeps them on the import's write path). WITHOUT ROWID: the key is the row.
-- 3. company_domains and company_tickers become WITHOUT ROWID: a text primary key of a rowid
--    table is stored twice, in the table and in its automatic index. company_domains keeps
--    one index for a company's domains and its primary; triggers keep one primary a company.
-- 4. catalogue_search becomes contentless (content='', contentless_delete=1): the index alone,
--    without the copy of every name, alias, domain and ticker it used to keep, and without the
--    prefix indexes, which short prefixes no longer need (they read search_prefixes). Its
--    triggers rebuild a company's row from the tables on every change, as a contentless table
--    cannot read back what it indexed.
-- drizzle-kit cannot describe WITHOUT ROWID, virtual tables or triggers: those parts are
-- hand-written, and the drizzle snapshot knows these tables as ordinary ones.
CREATE TABLE `search_prefix_lists` (
	`kind` text NOT NULL,
	`prefix` text NOT NULL,
	`size` integer DEFAULT 0 NOT NULL,
	`floor_prominence` integer,
	`floor_company_id` integer,
	PRIMARY KEY(`kind`, `prefix`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `search_prefixes` (
	`kind` text NOT NULL,
	`prefix` text NOT NULL,
	`company_id` integer NOT NULL,
	`prominence` integer NOT NULL,
	PRIMARY KEY(`kind`, `prefix`, `company_id`),
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `search_prefixes_company_idx` ON `search_prefixes` (`company_id`);--> statement-breakpoint
DROP INDEX `companies_name_key_idx`;--> statement-breakpoint
CREATE INDEX `companies_name_key_idx` ON `companies` (`name_key`,"prominence" desc);--> statement-breakpoint
-- A list over 64 gives up its last company, whose rank becomes the list's floor: from then on
-- only a company ranking above the floor joins (src/catalogue/searchPrefixes.ts), so the list
-- is always exactly the companies of its prefix above its floor.
CREATE TRIGGER `search_prefixes_insert` AFTER INSERT ON `search_prefixes` BEGIN
	INSERT INTO `search_prefix_lists` (`kind`, `prefix`, `size`) VALUES (new.`kind`, new.`prefix`, 1)
	ON CONFLICT (`kind`, `prefix`) DO UPDATE SET `size` = `size` + 1;
	UPDATE `search_prefix_lists`
	SET (`floor_prominence`, `floor_company_id`) = (
		SELECT e.`prominence`, e.`company_id` FROM `search_prefixes` e
		WHERE e.`kind` = new.`kind` AND e.`prefix` = new.`prefix`
		ORDER BY e.`prominence`, e.`company_id` DESC LIMIT 1
	)
	WHERE `kind` = new.`kind` AND `prefix` = new.`prefix` AND `size` > 64;
	DELETE FROM `search_prefixes`
	WHERE `kind` = new.`kind` AND `prefix` = new.`prefix` AND `company_id` = (
		SELECT l.`floor_company_id` FROM `search_prefix_lists` l
		WHERE l.`kind` = new.`kind` AND l.`prefix` = new.`prefix` AND l.`size` > 64
	);
END;
--> statement-breakpoint
CREATE TRIGGER `search_prefixes_delete` AFTER DELETE ON `search_prefixes` BEGIN
	UPDATE `search_prefix_lists` SET `size` = `size` - 1 WHERE `kind` = old.`kind` AND `prefix` = old.`prefix`;
END;
--> statement-breakpoint
DROP TRIGGER `companies_search_insert`;--> statement-breakpoint
DROP TRIGGER `companies_search_update`;--> statement-breakpoint
DROP TRIGGER `companies_search_delete`;--> statement-breakpoint
DROP TRIGGER `company_domains_search_insert`;--> statement-breakpoint
DROP TRIGGER `company_domains_search_update`;--> statement-breakpoint
DROP TRIGGER `company_domains_search_delete`;--> statement-breakpoint
DROP TRIGGER `company_tickers_search_insert`;--> statement-breakpoint
DROP TRIGGER `company_tickers_search_update`;--> statement-breakpoint
DROP TRIGGER `company_tickers_search_delete`;--> statement-breakpoint
DROP TABLE `catalogue_search`;--> statement-breakpoint
CREATE TABLE `company_domains_without_rowid` (
	`domain` text PRIMARY KEY NOT NULL,
	`company_id` integer NOT NULL,
	`is_primary` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `company_domains_without_rowid` (`domain`, `company_id`, `is_primary`)
SELECT `domain`, `company_id`, `is_primary` FROM `company_domains`;
--> statement-breakpoint
DROP TABLE `company_domains`;--> statement-breakpoint
ALTER TABLE `company_domains_without_rowid` RENAME TO `company_domains`;--> statement-breakpoint
CREATE INDEX `company_domains_company_idx` ON `company_domains` (`company_id`,`is_primary`);--> statement-breakpoint
-- One primary domain per company, as the partial unique index did, without its storage.
CREATE TRIGGER `company_domains_one_primary_insert` BEFORE INSERT ON `company_domains` WHEN new.`is_primary` BEGIN
	SELECT RAISE(ABORT, 'UNIQUE constraint failed: company_domains.company_id (one primary domain)')
	WHERE EXISTS (SELECT 1 FROM `company_domains` WHERE `company_id` = new.`company_id` AND `is_primary` = 1);
END;
--> statement-breakpoint
CREATE TRIGGER `company_domains_one_primary_update` BEFORE UPDATE OF `company_id`, `is_primary` ON `company_domains` WHEN new.`is_primary` BEGIN
	SELECT RAISE(ABORT, 'UNIQUE constraint failed: company_domains.company_id (one primary domain)')
	WHERE EXISTS (SELECT 1 FROM `company_domains` WHERE `company_id` = new.`company_id` AND `is_primary` = 1 AND `domain` <> new.`domain`);
END;
--> statement-breakpoint
CREATE TABLE `company_tickers_without_rowid` (
	`ticker` text NOT NULL,
	`exchange` text DEFAULT '' NOT NULL,
	`company_id` integer NOT NULL,
	PRIMARY KEY(`ticker`, `exchange`),
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `company_tickers_without_rowid` (`ticker`, `exchange`, `company_id`)
SELECT `ticker`, `exchange`, `company_id` FROM `company_tickers`;
--> statement-breakpoint
DROP TABLE `company_tickers`;--> statement-breakpoint
ALTER TABLE `company_tickers_without_rowid` RENAME TO `company_tickers`;--> statement-breakpoint
CREATE INDEX `company_tickers_company_idx` ON `company_tickers` (`company_id`);--> statement-breakpoint
-- rowid = companies.id. Same columns and tokenizer as before, so column filters
-- (`tickers:ACME`) and phrases (`"acme.io"`) keep working.
CREATE VIRTUAL TABLE `catalogue_search` USING fts5(
	`name`, `aliases`, `domains`, `tickers`,
	tokenize = 'unicode61 remove_diacritics 2',
	content = '',
	contentless_delete = 1
);
--> statement-breakpoint
-- What the index holds of each company, from the tables: the one definition the fill below,
-- the triggers and the benchmark's bulk load share.
CREATE VIEW `catalogue_search_source` AS
SELECT c.`id` AS `company_id`, c.`name`,
	(SELECT group_concat(`value`, ' ') FROM json_each(c.`aliases`)) AS `aliases`,
	coalesce((SELECT group_concat(`domain`, ' ') FROM `company_domains` WHERE `company_id` = c.`id`), '') AS `domains`,
	coalesce((SELECT group_concat(`ticker`, ' ') FROM `company_tickers` WHERE `company_id` = c.`id`), '') AS `tickers`
FROM `companies` c;
--> statement-breakpoint
INSERT INTO `catalogue_search` (`rowid`, `name`, `aliases`, `domains`, `tickers`)
SELECT * FROM `catalogue_search_source` ORDER BY `company_id`;
--> statement-breakpoint
-- Every trigger below rebuilds the row of the company it touched (nothing when the company is
-- gone).
CREATE TRIGGER `companies_search_insert` AFTER INSERT ON `companies` BEGIN
	INSERT OR REPLACE INTO `catalogue_search` (`rowid`, `name`, `aliases`, `domains`, `tickers`)
	SELECT * FROM `catalogue_search_source` WHERE `company_id` = new.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `companies_search_update` AFTER UPDATE OF `name`, `aliases` ON `companies` BEGIN
	INSERT OR REPLACE INTO `catalogue_search` (`rowid`, `name`, `aliases`, `domains`, `tickers`)
	SELECT * FROM `catalogue_search_source` WHERE `company_id` = new.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `companies_search_delete` AFTER DELETE ON `companies` BEGIN
	DELETE FROM `catalogue_search` WHERE `rowid` = old.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `company_domains_search_insert` AFTER INSERT ON `company_domains` BEGIN
	INSERT OR REPLACE INTO `catalogue_search` (`rowid`, `name`, `aliases`, `domains`, `tickers`)
	SELECT * FROM `catalogue_search_source` WHERE `company_id` = new.`company_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `company_domains_search_update` AFTER UPDATE ON `company_domains` BEGIN
	INSERT OR REPLACE INTO `catalogue_search` (`rowid`, `name`, `aliases`, `domains`, `tickers`)
	SELECT * FROM `catalogue_search_source` WHERE `company_id` IN (old.`company_id`, new.`company_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `company_domains_search_delete` AFTER DELETE ON `company_domains` BEGIN
	INSERT OR REPLACE INTO `catalogue_search` (`rowid`, `name`, `aliases`, `domains`, `tickers`)
	SELECT * FROM `catalogue_search_source` WHERE `company_id` = old.`company_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `company_tickers_search_insert` AFTER INSERT ON `company_tickers` BEGIN
	INSERT OR REPLACE INTO `catalogue_search` (`rowid`, `name`, `aliases`, `domains`, `tickers`)
	SELECT * FROM `catalogue_search_source` WHERE `company_id` = new.`company_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `company_tickers_search_update` AFTER UPDATE ON `company_tickers` BEGIN
	INSERT OR REPLACE INTO `catalogue_search` (`rowid`, `name`, `aliases`, `domains`, `tickers`)
	SELECT * FROM `catalogue_search_source` WHERE `company_id` IN (old.`company_id`, new.`company_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `company_tickers_search_delete` AFTER DELETE ON `company_tickers` BEGIN
	INSERT OR REPLACE INTO `catalogue_search` (`rowid`, `name`, `aliases`, `domains`, `tickers`)
	SELECT * FROM `catalogue_search_source` WHERE `company_id` = old.`company_id`;
END;
--> statement-breakpoint
-- The words the full-text index holds, each with its company: where the prefix lists of the
-- companies already in the catalogue come from (the write path computes the same words in
-- TypeScript, src/catalogue/searchPrefixes.ts).
CREATE VIRTUAL TABLE `catalogue_search_words` USING fts5vocab(`catalogue_search`, 'instance');
--> statement-breakpoint
CREATE TABLE `search_prefix_staging` AS
WITH `lengths` (`n`) AS (VALUES (1), (2), (3)),
`entries` AS (
	SELECT 'name' AS `kind`, substr(c.`name_key`, 1, l.`n`) AS `prefix`, c.`id` AS `company_id`, c.`prominence`
	FROM `companies` c JOIN `lengths` l ON length(c.`name_key`) >= l.`n`
	UNION
	SELECT 'word', substr(w.`term`, 1, l.`n`), w.`doc`, c.`prominence`
	FROM `catalogue_search_words` w JOIN `lengths` l ON length(w.`term`) >= l.`n` JOIN `companies` c ON c.`id` = w.`doc`
)
SELECT `kind`, `prefix`, `company_id`, `prominence`,
	row_number() OVER (PARTITION BY `kind`, `prefix` ORDER BY `prominence` DESC, `company_id`) AS `place`
FROM `entries`;
--> statement-breakpoint
INSERT INTO `search_prefixes` (`kind`, `prefix`, `company_id`, `prominence`)
SELECT `kind`, `prefix`, `company_id`, `prominence` FROM `search_prefix_staging` WHERE `place` <= 64;
--> statement-breakpoint
UPDATE `search_prefix_lists` SET (`floor_prominence`, `floor_company_id`) = (
	SELECT s.`prominence`, s.`company_id` FROM `search_prefix_staging` s
	WHERE s.`kind` = `search_prefix_lists`.`kind` AND s.`prefix` = `search_prefix_lists`.`prefix` AND s.`place` = 65
);
--> statement-breakpoint
DROP TABLE `search_prefix_staging`;
