/**
 * The four styles the CLI prints in, written exactly as chalk 5 writes them (16-colour codes at
 * any level above 0). Chalk was dropped from start-up because importing it cost ~5 ms of every
 * run: its supports-color loads node:tty and node:os to decide a level that io.ts decides itself.
 */
export type ColorLevel = 0 | 1 | 2 | 3;
export type Paint = (text: string) => string;

export interface Colors {
  readonly level: ColorLevel;
  red: Paint;
  green: Paint;
  yellow: Paint;
  dim: Paint;
}

/** Every `close` inside the text reopens the style, and every line is closed and reopened. */
function paint(level: ColorLevel, openCode: number, closeCode: number): Paint {
  const open = `\x1b[${openCode}m`;
  const close = `\x1b[${closeCode}m`;
  return (text) => {
    if (level <= 0 || !text) return text;
    let styled = text.includes('\x1b') ? text.replaceAll(close, close + open) : text;
    if (styled.includes('\n')) styled = styled.replace(/\r?\n/g, (newline) => close + newline + open);
    return open + styled + close;
  };
}

export function createColors(level: ColorLevel): Colors {
  return {
    level,
    red: paint(level, 31, 39),
    green: paint(level, 32, 39),
    yellow: paint(level, 33, 39),
    dim: paint(level, 2, 22),
  };
}
