-- Full-text index over company names, aliases, domains and tickers (rowid = companies.id).
-- drizzle-kit cannot describe virtual tables, so this migration is hand-written; the
-- triggers below keep the index in step with the tables inside the same statement, so a
-- company is searchable the moment its write commits.
-- Prefix indexes make `term*` queries (typing-as-you-search) an index range read.
CREATE VIRTUAL TABLE `catalogue_search` USING fts5(
	`name`, `aliases`, `domains`, `tickers`,
	tokenize = 'unicode61 remove_diacritics 2',
	prefix = '1 2 3'
);
--> statement-breakpoint
CREATE TRIGGER `companies_search_insert` AFTER INSERT ON `companies` BEGIN
	INSERT INTO `catalogue_search` (`rowid`, `name`, `aliases`, `domains`, `tickers`)
	VALUES (new.`id`, new.`name`, (SELECT group_concat(`value`, ' ') FROM json_each(new.`aliases`)), '', '');
END;
--> statement-breakpoint
CREATE TRIGGER `companies_search_update` AFTER UPDATE OF `name`, `aliases` ON `companies` BEGIN
	UPDATE `catalogue_search`
	SET `name` = new.`name`, `aliases` = (SELECT group_concat(`value`, ' ') FROM json_each(new.`aliases`))
	WHERE `rowid` = new.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `companies_search_delete` AFTER DELETE ON `companies` BEGIN
	DELETE FROM `catalogue_search` WHERE `rowid` = old.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `company_domains_search_insert` AFTER INSERT ON `company_domains` BEGIN
	UPDATE `catalogue_search`
	SET `domains` = (SELECT group_concat(`domain`, ' ') FROM `company_domains` WHERE `company_id` = new.`company_id`)
	WHERE `rowid` = new.`company_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `company_domains_search_update` AFTER UPDATE ON `company_domains` BEGIN
	UPDATE `catalogue_search`
	SET `domains` = (SELECT group_concat(`domain`, ' ') FROM `company_domains` WHERE `company_id` = old.`company_id`)
	WHERE `rowid` = old.`company_id`;
	UPDATE `catalogue_search`
	SET `domains` = (SELECT group_concat(`domain`, ' ') FROM `company_domains` WHERE `company_id` = new.`company_id`)
	WHERE `rowid` = new.`company_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `company_domains_search_delete` AFTER DELETE ON `company_domains` BEGIN
	UPDATE `catalogue_search`
	SET `domains` = coalesce((SELECT group_concat(`domain`, ' ') FROM `company_domains` WHERE `company_id` = old.`company_id`), '')
	WHERE `rowid` = old.`company_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `company_tickers_search_insert` AFTER INSERT ON `company_tickers` BEGIN
	UPDATE `catalogue_search`
	SET `tickers` = (SELECT group_concat(`ticker`, ' ') FROM `company_tickers` WHERE `company_id` = new.`company_id`)
	WHERE `rowid` = new.`company_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `company_tickers_search_update` AFTER UPDATE ON `company_tickers` BEGIN
	UPDATE `catalogue_search`
	SET `tickers` = (SELECT group_concat(`ticker`, ' ') FROM `company_tickers` WHERE `company_id` = old.`company_id`)
	WHERE `rowid` = old.`company_id`;
	UPDATE `catalogue_search`
	SET `tickers` = (SELECT group_concat(`ticker`, ' ') FROM `company_tickers` WHERE `company_id` = new.`company_id`)
	WHERE `rowid` = new.`company_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `company_tickers_search_delete` AFTER DELETE ON `company_tickers` BEGIN
	UPDATE `catalogue_search`
	SET `tickers` = coalesce((SELECT group_concat(`ticker`, ' ') FROM `company_tickers` WHERE `company_id` = old.`company_id`), '')
	WHERE `rowid` = old.`company_id`;
END;
