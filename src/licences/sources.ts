/**
 * The icon sets the bundled catalogue is seeded from, with the licence each is released under
 * and the attribution that licence asks for. The seed (tools/seed/sets/) reads these to stamp
 * every logo's provenance; GET /licences serves them with the live counts.
 *
 * Only permissive licences: CC0 (no conditions), MIT and ISC (keep the copyright and permission notice),
 * CC BY 4.0 (credit the author, link the licence, say what was changed) and, for Academicons' glyphs,
 * the SIL Open Font License 1.1 (use, modify and redistribute freely; never sold by themselves). simple-icons records
 * a licence per icon, where a project's own logo comes under its project's licence (CC BY-SA,
 * GPL…): those keep it, recorded on the logo.
 */
export interface SourceSet {
  /** The `source_set` of every logo from this set, and the prefix of its seed files. */
  id: string;
  title: string;
  /** SPDX id of the set's licence; simple-icons may override it per icon. */
  licence: string;
  licenceUrl: string;
  /** Where the set is published. */
  link: string;
  /** The credit its licence requires, as it must be shown; null where none is required. */
  attribution: string | null;
}

const CC0 = "https://creativecommons.org/publicdomain/zero/1.0/";
export const CHANGES = "Rendered to PNG, resized, and (monochrome icons) painted in the brand's colour.";

export const sourceSets = [
  {
    id: "ft-logo-images",
    title: "Financial Times logo images, published by the Financial Times (`@financial-times/logo-images`)",
    licence: "MIT",
    licenceUrl: "https://opensource.org/licenses/MIT",
    link: "https://github.com/Financial-Times/logo-images",
    attribution:
      'Financial Times logo images, Copyright (c) The Financial Times Limited, released under the MIT License: permission is granted free of charge to use, copy, modify and distribute, provided the copyright notice and permission notice are included; the images are provided "as is", without warranty of any kind.',
  },
  {
    id: "bbc-psammead",
    title: "BBC blocks from Psammead, the BBC's component library (`@bbc/psammead-assets`)",
    licence: "Apache-2.0",
    licenceUrl: "https://www.apache.org/licenses/LICENSE-2.0",
    link: "https://github.com/bbc/psammead",
    attribution:
      "The BBC blocks, from Psammead assets by the BBC (https://github.com/bbc/psammead), licensed under the Apache License 2.0 (https://www.apache.org/licenses/LICENSE-2.0). Rendered to PNG, resized, and painted in the brand's colour in place of the placeholder grey the package draws them in.",
  },
  {
    id: "springer-nature",
    title: "Nature's icon from Springer Nature's brand context for its own products (`@springernature/brand-context`)",
    licence: "MIT",
    licenceUrl: "https://github.com/springernature/frontend-nature-toolkit/blob/master/LICENCE",
    link: "https://github.com/springernature/frontend-nature-toolkit",
    attribution:
      'Springer Nature brand context, Copyright (c) 2020 Springer Nature, released under the MIT License: permission is granted free of charge to use, copy, modify and distribute, provided the copyright notice and permission notice are included; the images are provided "as is", without warranty of any kind.',
  },
  {
    id: "ooui",
    title: "Wikimedia project logos from OOUI, the Wikimedia Foundation's user-interface library (Iconify set `ooui`)",
    licence: "MIT",
    licenceUrl: "https://github.com/wikimedia/oojs-ui/blob/master/LICENSE-MIT",
    link: "https://github.com/wikimedia/oojs-ui",
    attribution:
      'OOUI, Copyright OOUI Team and other contributors (Wikimedia), released under the MIT License: permission is granted free of charge to use, copy, modify and distribute, provided the copyright notice and permission notice are included; the icons are provided "as is", without warranty of any kind.',
  },
  {
    id: "iconify-logos",
    title: "SVG Logos by Gil Barbara (Iconify set `logos`)",
    licence: "CC0-1.0",
    licenceUrl: CC0,
    link: "https://github.com/gilbarbara/logos",
    attribution: null,
  },
  {
    id: "lobe-icons",
    title: "Lobe Icons by LobeHub (AI and model brands)",
    licence: "MIT",
    licenceUrl: "https://github.com/lobehub/lobe-icons/blob/master/LICENSE",
    link: "https://github.com/lobehub/lobe-icons",
    attribution:
      'Lobe Icons, Copyright (c) 2023 LobeHub, released under the MIT License: permission is granted free of charge to use, copy, modify and distribute, provided the copyright notice and permission notice are included; the icons are provided "as is", without warranty of any kind.',
  },
  {
    id: "devicon",
    title: "Devicon by konpa and contributors (Iconify set `devicon`)",
    licence: "MIT",
    licenceUrl: "https://github.com/devicons/devicon/blob/master/LICENSE",
    link: "https://devicon.dev",
    attribution:
      'Devicon, Copyright (c) 2015 konpa, released under the MIT License: permission is granted free of charge to use, copy, modify and distribute, provided the copyright notice and permission notice are included; the icons are provided "as is", without warranty of any kind.',
  },
  {
    id: "vscode-icons",
    title: "vscode-icons by the vscode-icons contributors (Iconify set `vscode-icons`)",
    licence: "MIT",
    licenceUrl: "https://github.com/vscode-icons/vscode-icons/blob/master/LICENSE",
    link: "https://github.com/vscode-icons/vscode-icons",
    attribution:
      'vscode-icons, Copyright The vscode-icons Contributors, released under the MIT License: permission is granted free of charge to use, copy, modify and distribute, provided the copyright notice and permission notice are included; the icons are provided "as is", without warranty of any kind.',
  },
  {
    id: "web3icons",
    title: "Web3 Icons (branded) by 0xa3k5 (Iconify set `token-branded`)",
    licence: "MIT",
    licenceUrl: "https://github.com/0xa3k5/web3icons/blob/main/LICENCE",
    link: "https://github.com/0xa3k5/web3icons",
    attribution:
      'Web3 Icons, Copyright (c) 0xa3k5, released under the MIT License: permission is granted free of charge to use, copy, modify and distribute, provided the copyright notice and permission notice are included; the icons are provided "as is", without warranty of any kind.',
  },
  {
    id: "cryptocurrency-icons",
    title: "Cryptocurrency Icons by Christopher Downer (Iconify set `cryptocurrency-color`)",
    licence: "CC0-1.0",
    licenceUrl: CC0,
    link: "https://github.com/atomiclabs/cryptocurrency-icons",
    attribution: null,
  },
  {
    id: "simple-icons",
    title: "Simple Icons",
    licence: "CC0-1.0",
    licenceUrl: CC0,
    link: "https://simpleicons.org",
    attribution: null,
  },
  {
    id: "coreui-brands",
    title: "CoreUI Icons, brands, by creativeLabs Łukasz Holeczek (Iconify set `cib`)",
    licence: "CC0-1.0",
    licenceUrl: CC0,
    link: "https://github.com/coreui/coreui-icons",
    attribution: null,
  },
  {
    id: "fa6-brands",
    title: "Font Awesome Free 6, brands, by Fonticons, Inc. (Iconify set `fa6-brands`)",
    licence: "CC-BY-4.0",
    licenceUrl: "https://creativecommons.org/licenses/by/4.0/",
    link: "https://fontawesome.com",
    attribution: `Brand icons from Font Awesome Free 6 by Fonticons, Inc. (https://fontawesome.com), licensed under CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/). ${CHANGES}`,
  },
  {
    id: "boxicons-brands",
    title: "Boxicons, brands (Iconify set `bxl`)",
    licence: "MIT",
    licenceUrl: "https://github.com/box-icons/boxicons-core/blob/main/LICENSE",
    link: "https://boxicons.com",
    attribution:
      'Boxicons, Copyright (c) Boxicons, released under the MIT License: permission is granted free of charge to use, copy, modify and distribute, provided the copyright notice and permission notice are included; the icons are provided "as is", without warranty of any kind.',
  },
  {
    id: "streamline-logos",
    title: "Streamline, free Logos set (Iconify set `streamline-logos`)",
    licence: "CC-BY-4.0",
    licenceUrl: "https://creativecommons.org/licenses/by/4.0/",
    link: "https://github.com/webalys-hq/streamline-vectors",
    attribution: `Logos from Streamline's free Logos set (https://www.streamlinehq.com), licensed under CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/). ${CHANGES}`,
  },
  {
    id: "file-icons",
    title: "File Icons by John Gardner (Iconify set `file-icons`)",
    licence: "ISC",
    licenceUrl: "https://github.com/file-icons/icons/blob/master/LICENSE.md",
    link: "https://github.com/file-icons/icons",
    attribution:
      'File Icons, Copyright (c) 2016-2020, John Gardner, released under the ISC License: permission to use, copy, modify and/or distribute for any purpose with or without fee is granted, provided the copyright notice and permission notice appear in all copies; provided "as is", without warranty.',
  },
  {
    id: "super-tiny-icons",
    title: "Super Tiny Icons by Terence Eden and contributors",
    licence: "MIT",
    licenceUrl: "https://github.com/edent/SuperTinyIcons/blob/master/LICENSE",
    link: "https://github.com/edent/SuperTinyIcons",
    attribution:
      'Super Tiny Icons, Copyright (c) 2017 Terence Eden, released under the MIT License: permission is granted free of charge to use, copy, modify and distribute, provided the copyright notice and permission notice are included; the icons are provided "as is", without warranty of any kind.',
  },
  {
    id: "tabler-brands",
    title: "Tabler Icons, brands, by Paweł Kuna (Iconify set `tabler`)",
    licence: "MIT",
    licenceUrl: "https://github.com/tabler/tabler-icons/blob/master/LICENSE",
    link: "https://tabler.io/icons",
    attribution:
      'Tabler Icons, Copyright (c) Paweł Kuna, released under the MIT License: permission is granted free of charge to use, copy, modify and distribute, provided the copyright notice and permission notice are included; the icons are provided "as is", without warranty of any kind.',
  },
  {
    id: "css-gg",
    title: "css.gg by Astrit Malsija (Iconify set `gg`)",
    licence: "MIT",
    licenceUrl: "https://github.com/astrit/css.gg/blob/master/LICENSE",
    link: "https://css.gg",
    attribution:
      'css.gg, Copyright (c) Astrit Malsija, released under the MIT License: permission is granted free of charge to use, copy, modify and distribute, provided the copyright notice and permission notice are included; the icons are provided "as is", without warranty of any kind.',
  },
  {
    id: "academicons",
    title: "Academicons by James Walsh (Iconify set `academicons`), academic publishers' and services' logos",
    licence: "OFL-1.1",
    licenceUrl: "https://openfontlicense.org/open-font-license-official-text/",
    link: "https://github.com/jpswalsh/academicons",
    attribution: `Academicons by James Walsh (https://github.com/jpswalsh/academicons), licensed under the SIL Open Font License 1.1 (https://openfontlicense.org). ${CHANGES}`,
  },
  {
    id: "thesvg",
    title: "theSVG brand icons by thesvg.org (`@thesvg/icons`), only the drawings it records as CC0-1.0 or MIT",
    licence: "MIT",
    licenceUrl: "https://github.com/glincker/thesvg/blob/main/LICENSE",
    link: "https://thesvg.org",
    attribution:
      'theSVG, Copyright (c) 2025 thesvg.org, released under the MIT License: permission is granted free of charge to use, copy, modify and distribute, provided the copyright notice and permission notice are included; the icons are provided "as is", without warranty of any kind. Each drawing keeps the licence theSVG records for it (CC0-1.0 or MIT), recorded on its logo.',
  },
] as const satisfies readonly SourceSet[];

export type SourceSetId = (typeof sourceSets)[number]["id"];

/**
 * Licences under which an icon may not be served by a commercial logo service: non-commercial,
 * no-derivatives, or terms of their own.
 */
export const RESTRICTIVE_LICENCE = /(^|-)(NC|ND)(-|$)|^custom$/i;
