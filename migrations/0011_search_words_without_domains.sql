-- Search's words are the words of names, aliases and tickers; domains are found by the domain
-- index instead (README, "The catalogue at scale").
-- A domain's label is one word to the full-text index ("globalconsulting4", "acmelabs"), and
-- domain labels are most of its vocabulary: in the benchmark's catalogue of 4 million
-- companies, all but one of the 73,849 words that start with "global". A prefix term
-- ("global"*) gathers every word it starts before it returns its first match, so each of them
-- cost every search of a common word. Without them the index is about a third of its size, and
-- "global"* is one word. Searches now match a domain by its start, on company_domains' primary key
-- (src/catalogue/queries.ts), so "qf" still finds the company at qf.io; what they no longer
-- do is take a domain's top-level labels ("com", "co", "uk") for words of every company.
-- 1. catalogue_search is rebuilt with the columns name, aliases and tickers, from the tables;
--    company_domains no longer touches it.
-- 2. The word lists of search_prefixes are rebuilt from the new index's words, as 0009 built
--    them; the name lists are unchanged.
DROP TRIGGER `companies_search_insert`;--> statement-breakpoint
DROP TRIGGER `companies_search_update`;--> statement-breakpoint
DROP TRIGGER `companies_search_delete`;--> statement-breakpoint
DROP TRIGGER `company_domains_search_insert`;--> statement-breakpoint
DROP TRIGGER `company_domains_search_update`;--> statement-breakpoint
DROP TRIGGER `company_domains_search_delete`;--> statement-breakpoint
DROP TRIGGER `company_tickers_search_insert`;--> statement-breakpoint
DROP TRIGGER `company_tickers_search_update`;--> statement-breakpoint
DROP TRIGGER `company_tickers_search_delete`;--> statement-breakpoint
DROP VIEW `catalogue_search_source`;--> statement-breakpoint
DROP TABLE `catalogue_search`;--> statement-breakpoint
CREATE VIRTUAL TABLE `catalogue_search` USING fts5(
	`name`, `aliases`, `tickers`,
	tokenize = 'unicode61 remove_diacritics 2',
	content = '',
	contentless_delete = 1
);
--> statement-breakpoint
CREATE VIEW `catalogue_search_source` AS
SELECT c.`id` AS `company_id`, c.`name`,
	(SELECT group_concat(`value`, ' ') FROM json_each(c.`aliases`)) AS `aliases`,
	coalesce((SELECT group_concat(`ticker`, ' ') FROM `company_tickers` WHERE `company_id` = c.`id`), '') AS `tickers`
FROM `companies` c;
--> statement-breakpoint
INSERT INTO `catalogue_search` (`rowid`, `name`, `aliases`, `tickers`)
SELECT * FROM `catalogue_search_source` ORDER BY `company_id`;
--> statement-breakpoint
CREATE TRIGGER `companies_search_insert` AFTER INSERT ON `companies` BEGIN
	INSERT OR REPLACE INTO `catalogue_search` (`rowid`, `name`, `aliases`, `tickers`)
	SELECT * FROM `catalogue_search_source` WHERE `company_id` = new.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `companies_search_update` AFTER UPDATE OF `name`, `aliases` ON `companies` BEGIN
	INSERT OR REPLACE INTO `catalogue_search` (`rowid`, `name`, `aliases`, `tickers`)
	SELECT * FROM `catalogue_search_source` WHERE `company_id` = new.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `companies_search_delete` AFTER DELETE ON `companies` BEGIN
	DELETE FROM `catalogue_search` WHERE `rowid` = old.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `company_tickers_search_insert` AFTER INSERT ON `company_tickers` BEGIN
	INSERT OR REPLACE INTO `catalogue_search` (`rowid`, `name`, `aliases`, `tickers`)
	SELECT * FROM `catalogue_search_source` WHERE `company_id` = new.`company_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `company_tickers_search_update` AFTER UPDATE ON `company_tickers` BEGIN
	INSERT OR REPLACE INTO `catalogue_search` (`rowid`, `name`, `aliases`, `tickers`)
	SELECT * FROM `catalogue_search_source` WHERE `company_id` IN (old.`company_id`, new.`company_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `company_tickers_search_delete` AFTER DELETE ON `company_tickers` BEGIN
	INSERT OR REPLACE INTO `catalogue_search` (`rowid`, `name`, `aliases`, `tickers`)
	SELECT * FROM `catalogue_search_source` WHERE `company_id` = old.`company_id`;
END;
--> statement-breakpoint
-- The lists go first, so that the entries' delete trigger finds no list to count down.
DELETE FROM `search_prefix_lists` WHERE `kind` = 'word';--> statement-breakpoint
DELETE FROM `search_prefixes` WHERE `kind` = 'word';--> statement-breakpoint
CREATE TABLE `search_prefix_staging` AS
WITH `lengths` (`n`) AS (VALUES (1), (2), (3)),
`entries` AS (
	SELECT DISTINCT substr(w.`term`, 1, l.`n`) AS `prefix`, w.`doc` AS `company_id`, c.`prominence`
	FROM `catalogue_search_words` w JOIN `lengths` l ON length(w.`term`) >= l.`n` JOIN `companies` c ON c.`id` = w.`doc`
)
SELECT 'word' AS `kind`, `prefix`, `company_id`, `prominence`,
	row_number() OVER (PARTITION BY `prefix` ORDER BY `prominence` DESC, `company_id`) AS `place`
FROM `entries`;
--> statement-breakpoint
INSERT INTO `search_prefixes` (`kind`, `prefix`, `company_id`, `prominence`)
SELECT `kind`, `prefix`, `company_id`, `prominence` FROM `search_prefix_staging` WHERE `place` <= 64;
--> statement-breakpoint
UPDATE `search_prefix_lists` SET (`floor_prominence`, `floor_company_id`) = (
	SELECT s.`prominence`, s.`company_id` FROM `search_prefix_staging` s
	WHERE s.`prefix` = `search_prefix_lists`.`prefix` AND s.`place` = 65
)
WHERE `kind` = 'word';
--> statement-breakpoint
DROP TABLE `search_prefix_staging`;
