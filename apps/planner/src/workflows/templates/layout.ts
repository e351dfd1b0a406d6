/** Positions on the canvas: one column per step, left to right, 320 px apart. */
export const column = (i: number, row = 0) => ({ x: i * 320, y: row * 180 });

export const startNode = { id: 'start', type: 'start', position: column(0), data: {} };

export const edge = (source: string, target: string) => ({ id: `${source}->${target}`, source, target });
