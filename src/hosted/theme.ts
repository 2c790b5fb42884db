import type { FormSettings } from "../forms/form-defaults.ts";
import { DEFAULT_SETTINGS } from "../forms/form-defaults.ts";
import { isAbsoluteUrl, isColor } from "../http/formats.ts";

export type Appearance = FormSettings;

/** The stored settings over the defaults: every member a page reads is present. */
export const appearanceOf = (settings: Partial<FormSettings>): Appearance => ({
  ...DEFAULT_SETTINGS,
  ...settings,
});

/** A color checked on write; anything else never reaches a style sheet. */
export const color = (value: string, fallback: string) => (isColor(value) ? value : fallback);

/** An image or link the page may use: absolute http(s) only, never `javascript:` or `data:`. */
export const safeUrl = (value: string, protocols: readonly string[] = ["https:", "http:"]) =>
  value !== "" && isAbsoluteUrl(value, protocols) ? value : null;

const RADII: Record<string, string> = { flat: "0", rounded: "8px", full: "999px" };
const radius = (style: string) => RADII[style] ?? RADII.rounded;

/** The form's colors and corners as custom properties, read by the base style sheet. */
export function formTheme(appearance: Appearance): string {
  const d = DEFAULT_SETTINGS;
  return `:root{--bg:${color(appearance.backgroundColor, d.backgroundColor)};--text:${color(appearance.textColor, d.textColor)};--accent:${color(appearance.accentColor, d.accentColor)};--btn-bg:${color(appearance.buttonBackgroundColor, d.buttonBackgroundColor)};--btn-text:${color(appearance.buttonTextColor, d.buttonTextColor)};--input-radius:${radius(appearance.inputBorderStyle)};--btn-radius:${radius(appearance.buttonBorderStyle)}}`;
}

/** The thank-you page's own colors (`tp*`), when the owner wrote one. */
export function thanksTheme(appearance: Appearance): string {
  const d = DEFAULT_SETTINGS;
  return `:root{--bg:${color(appearance.tpBackgroundColor, d.tpBackgroundColor)};--text:${color(appearance.tpTextColor, d.tpTextColor)};--btn-bg:${color(appearance.tpButtonBackgroundColor, d.tpButtonBackgroundColor)};--btn-text:${color(appearance.tpButtonColor, d.tpButtonColor)};--accent:${color(appearance.tpTextColor, d.tpTextColor)}}`;
}

export const DEFAULT_THEME =
  ":root{--bg:#ffffff;--text:#030712;--accent:#030712;--btn-bg:#030712;--btn-text:#ffffff}";
