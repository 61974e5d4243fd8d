import { describe, expect, it } from "vitest";
import { isValidIsin } from "../../src/lib/isin";

describe("isValidIsin", () => {
  it("accepts ISINs of several numbering agencies, letters in the body included", () => {
    for (const isin of [
      "US0378331005", // Apple
      "GB0002634946", // BAE Systems
      "DE0007164600", // SAP
      "JP3633400001", // Toyota
      "CH0038863350", // Nestlé
      "KYG875721634", // Tencent, numbered in the Cayman Islands
      "AU0000XVGZA3", // a body of letters: the expansion to digits decides
      "XS2021832634", // the international prefix (Euroclear, Clearstream)
    ]) {
      expect(isValidIsin(isin), isin).toBe(true);
    }
  });

  it("refuses a wrong check digit, and any single digit of the body changed", () => {
    expect(isValidIsin("US0378331006")).toBe(false);
    expect(isValidIsin("US037833100X")).toBe(false);
    const apple = "US0378331005";
    for (let i = 2; i < apple.length; i++) {
      for (const digit of "0123456789") {
        if (digit === apple[i]) continue;
        const changed = apple.slice(0, i) + digit + apple.slice(i + 1);
        expect(isValidIsin(changed), changed).toBe(false);
      }
    }
  });

  it("refuses two neighbouring digits swapped where the check digit catches it", () => {
    expect(isValidIsin("US0738331005")).toBe(false);
  });

  it("refuses lower case, spaces and the wrong length", () => {
    expect(isValidIsin("us0378331005")).toBe(false);
    expect(isValidIsin("US037833100s")).toBe(false);
    expect(isValidIsin(" US0378331005")).toBe(false);
    expect(isValidIsin("US 0378331005")).toBe(false);
    expect(isValidIsin("US037833105")).toBe(false);
    expect(isValidIsin("US03783310055")).toBe(false);
    expect(isValidIsin("")).toBe(false);
  });

  it("refuses a prefix that is no country code nor one ISO 6166 reserves, even with a matching check digit", () => {
    // Each has the check digit its characters call for.
    expect(isValidIsin("ZZ0378331001")).toBe(false);
    expect(isValidIsin("AA0378331009")).toBe(false);
    expect(isValidIsin("QQ0378331003")).toBe(false);
    expect(isValidIsin("120378331005")).toBe(false);
  });
});
