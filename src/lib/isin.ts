/**
 * ISIN (ISO 6166): a two-letter prefix, nine characters that identify the security (digits and
 * capital letters), and a check digit. The prefix is the ISO 3166-1 alpha-2 code of the country
 * whose numbering agency issued the ISIN, or one of the prefixes ISO 6166 reserves for
 * securities no single country numbers: XS (international, Euroclear and Clearstream), EU
 * (issued by the European Union) and XA to XD (assigned by CUSIP Global Services for issuers
 * outside its countries).
 *
 * The check digit is the Luhn (mod 10) digit over the first eleven characters with each letter
 * written as its two-digit value (A = 10 … Z = 35). Only the canonical form passes: upper case,
 * no spaces.
 */
const COUNTRIES = new Set(
  (
    "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
    "CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO " +
    "FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE " +
    "JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO " +
    "MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW " +
    "PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM " +
    "TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW " +
    "XS EU XA XB XC XD"
  ).split(" "),
);

const SHAPE = /^[A-Z]{2}[A-Z0-9]{9}[0-9]$/;

export function isValidIsin(s: string): boolean {
  if (!SHAPE.test(s) || !COUNTRIES.has(s.slice(0, 2))) return false;
  // Letters to their values (A = 10 … Z = 35), then Luhn over the whole string of digits.
  const digits = [...s].map((c) => (c >= "A" ? String(c.charCodeAt(0) - 55) : c)).join("");
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    // Every second digit from the right, the check digit being the first, is doubled.
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}
