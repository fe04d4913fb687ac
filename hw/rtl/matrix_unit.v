`default_nettype none
`include "chip_defs.vh"
// matrix_unit: MATMUL on the systolic array, tile by tile (hw/ISA.md).
//
// The output C (m x n) is cut into ARRAY_N x ARRAY_N tiles, visited row-major. Cycle costs:
//   SETUP    1                      set up the first tile
//   per tile, mr rows and nc columns:
//   LOAD     mr * ceil(k/N)         read the tile's mr rows of A into the tile buffers, ARRAY_N
//                                   words a cycle (the SRAM's wide port), then its B:
//            + nc * ceil(k/N)       BT: its nc columns, each contiguous, the same way
//            or + k                 row-major: its k tile rows, one a cycle, word j of a row to
//                                   column j's buffer
//   LOAD_END 1                      the last words arrive from the SRAM
//   COMP     k + 2*ARRAY_N - 1      one cycle to clear the array, then k skewed input beats and
//                                   2*ARRAY_N - 2 beats to drain the skew
//   WRITE    mr * nc                write the results row-major, one a cycle, requantized
//                                   unless RAW
// `done` is high in the last write cycle of the last tile. Cycle 0 is the cycle after
// `cmd_matmul`.
//
// The tile buffers are 2 * ARRAY_N tile_buffers of K_MAX int8 words: row r of the A tile, and
// column j of the B tile. In beat t (t = 0 .. k + 2N - 3) row r of the array gets A[r][t - r]
// and column j gets B[t - j][j], zero outside 0 .. k-1 and outside the tile.
module matrix_unit #(
    parameter ARRAY_N = `ARRAY_N_DEFAULT,    // the systolic array is ARRAY_N x ARRAY_N
    parameter K_MAX   = `K_MAX_DEFAULT,      // the longest reduction (depth of the tile buffers)
    parameter SRAM_AW = 12                   // SRAM address width
) (
    input  wire               clk,
    input  wire               rst,

    // command (fields held stable by the controller while the unit runs)
    input  wire               cmd_matmul,     // one cycle: start
    input  wire [15:0]        cmd_a,          // A, m x k, row-major
    input  wire [15:0]        cmd_b,          // B, k x n (row-major, or n x k with BT)
    input  wire [15:0]        cmd_c,          // C, m x n, row-major
    input  wire [7:0]         cmd_m,
    input  wire [7:0]         cmd_k,          // 1 .. K_MAX
    input  wire [7:0]         cmd_n,
    input  wire [7:0]         cmd_flags,      // bit 0 BT, bit 1 RAW
    input  wire [7:0]         cmd_shift,      // requant shift
    input  wire [31:0]        cmd_mult,       // requant multiplier
    output wire               done,           // high in the last cycle
    output wire               sat,            // the result written this cycle was clamped

    // SRAM
    output wire [SRAM_AW-1:0]     sram_raddr,
    input  wire [32*ARRAY_N-1:0]  sram_rdata,    // words sram_raddr .. + ARRAY_N - 1
    output wire               sram_we,
    output wire [SRAM_AW-1:0] sram_waddr,
    output wire [31:0]        sram_wdata
);

localparam KAW = $clog2(K_MAX);              // tile buffer address width
localparam [15:0] N16 = ARRAY_N[15:0];        // ARRAY_N, as a 16-bit operand

localparam [2:0] S_IDLE     = 3'd0;
localparam [2:0] S_SETUP    = 3'd1;
localparam [2:0] S_LOAD     = 3'd2;
localparam [2:0] S_LOAD_END = 3'd3;
localparam [2:0] S_COMP     = 3'd4;
localparam [2:0] S_WRITE    = 3'd5;

initial begin
    /* verilator coverage_off */    // parameter checks: only a bad parameter reaches their $finish
    `CHECK_RANGE("ARRAY_N", ARRAY_N, `ARRAY_N_LO, `ARRAY_N_HI)
    `CHECK_RANGE("K_MAX", K_MAX, `K_MAX_LO, `K_MAX_HI)
    /* verilator coverage_on */
end

// ---------------------------------------------------------------------------------------------
// state

reg [2:0]  state_reg,      state_next;
reg [7:0]  i0_reg,         i0_next;         // tile origin: first row of C
reg [7:0]  j0_reg,         j0_next;         // tile origin: first column of C
reg [15:0] a_tile_reg,     a_tile_next;     // a + i0*k: the tile row's first A word
reg [15:0] b_tile_reg,     b_tile_next;     // the tile's first B word: b + j0*k (BT) or b + j0
reg [15:0] c_row_reg,      c_row_next;      // c + i0*n
reg [7:0]  ld_r_reg,       ld_r_next;       // LOAD: A row (< mr) or BT column (- mr) being read
reg [7:0]  ld_t_reg,       ld_t_next;       // LOAD: first reduction index of the words read
reg [15:0] rd_ptr_reg,     rd_ptr_next;     // LOAD: SRAM address being read
reg [15:0] row_ptr_reg,    row_ptr_next;    // LOAD: first word of the A row or BT column
reg        bw_valid_reg,   bw_valid_next;   // words read last cycle go to the tile buffers
reg        bw_is_b_reg,    bw_is_b_next;    // ... to B column buffers (else an A row buffer)
reg        bw_wide_reg,    bw_wide_next;    // ... all to one buffer (else word j to column j)
reg [7:0]  bw_idx_reg,     bw_idx_next;     // ... which row or column (one buffer)
reg [7:0]  bw_t_reg,       bw_t_next;       // ... from which reduction index
reg [ARRAY_N-1:0] bw_lanes_reg, bw_lanes_next; // ... which of the words (one buffer)
reg [15:0] beat_reg,       beat_next;       // COMP: 0 clears the array, then beats 1 ..
reg [7:0]  wr_r_reg,       wr_r_next;       // WRITE: row within the tile
reg [7:0]  wr_col_reg,     wr_col_next;     // WRITE: column within the tile
reg [15:0] wr_ptr_reg,     wr_ptr_next;     // WRITE: SRAM address of C[i0 + r][j0 + col]
reg [15:0] wr_row_ptr_reg, wr_row_ptr_next; // WRITE: SRAM address of C[i0 + r][j0]

// ---------------------------------------------------------------------------------------------
// the current tile

wire        bt      = cmd_flags[0];
wire        raw     = cmd_flags[1];
wire [15:0] k16     = {8'd0, cmd_k};
wire [15:0] n16     = {8'd0, cmd_n};
wire [15:0] m_left  = {8'd0, cmd_m} - {8'd0, i0_reg};
wire [15:0] n_left  = n16 - {8'd0, j0_reg};
wire [15:0] mr      = (m_left < N16) ? m_left : N16;    // rows in this tile
wire [15:0] nc      = (n_left < N16) ? n_left : N16;    // columns in this tile
wire [15:0] n_k     = N16 * k16;                        // A words per tile row; B words per BT tile
wire        more_j  = ({8'd0, j0_reg} + N16) < n16;     // another tile in this tile row
wire        more_i  = ({8'd0, i0_reg} + N16) < {8'd0, cmd_m};

// LOAD
wire [15:0] ld_r     = {8'd0, ld_r_reg};
wire [15:0] ld_t     = {8'd0, ld_t_reg};
wire        in_a     = ld_r < mr;                        // reading A (else B)
wire        one_buf  = in_a || bt;                       // the words go to one buffer
wire        last_wd  = (ld_t + N16 >= k16);              // the row's (or column's) last read
wire        last_a   = in_a && (ld_r == mr - 16'd1);
wire        last_ld  = one_buf ? (last_wd && (ld_r == mr + nc - 16'd1))
                               : (ld_t_reg == cmd_k - 8'd1);
wire [15:0] b_col    = ld_r - mr;
wire [ARRAY_N-1:0] lanes_left;                           // words ld_t + i < k of this read

// COMP
wire [15:0] comp_beats = k16 + N16 + N16 - 16'd2;       // input and drain beats
wire        comp_end   = (beat_reg == comp_beats);
wire [15:0] feed_t     = beat_reg - 16'd1;              // t + r of the beat, r = row or column

// WRITE
wire        wr_row_end  = ({8'd0, wr_col_reg} == nc - 16'd1);
wire        wr_tile_end = wr_row_end && ({8'd0, wr_r_reg} == mr - 16'd1);

always @* begin
    state_next      = state_reg;
    i0_next         = i0_reg;
    j0_next         = j0_reg;
    a_tile_next     = a_tile_reg;
    b_tile_next     = b_tile_reg;
    c_row_next      = c_row_reg;
    ld_r_next       = ld_r_reg;
    ld_t_next       = ld_t_reg;
    rd_ptr_next     = rd_ptr_reg;
    row_ptr_next    = row_ptr_reg;
    bw_valid_next   = 1'b0;
    bw_is_b_next    = bw_is_b_reg;
    bw_wide_next    = bw_wide_reg;
    bw_idx_next     = bw_idx_reg;
    bw_t_next       = bw_t_reg;
    bw_lanes_next   = bw_lanes_reg;
    beat_next       = beat_reg;
    wr_r_next       = wr_r_reg;
    wr_col_next     = wr_col_reg;
    wr_ptr_next     = wr_ptr_reg;
    wr_row_ptr_next = wr_row_ptr_reg;

    case (state_reg)
        S_IDLE: begin
            if (cmd_matmul) begin
                state_next = S_SETUP;
            end
        end

        S_SETUP: begin
            i0_next     = 8'd0;
            j0_next     = 8'd0;
            a_tile_next = cmd_a;
            b_tile_next = cmd_b;
            c_row_next  = cmd_c;
            ld_r_next   = 8'd0;
            ld_t_next   = 8'd0;
            rd_ptr_next  = cmd_a;
            row_ptr_next = cmd_a;
            state_next   = S_LOAD;
        end

        S_LOAD: begin
            // the words read now land in the tile buffers next cycle
            bw_valid_next = 1'b1;
            bw_is_b_next  = !in_a;
            bw_wide_next  = one_buf;
            bw_idx_next   = in_a ? ld_r_reg : b_col[7:0];
            bw_t_next     = ld_t_reg;
            bw_lanes_next = lanes_left;
            if (!one_buf) begin
                // a row-major B's tile row t: the next one is n words on
                ld_t_next   = ld_t_reg + 8'd1;
                rd_ptr_next = rd_ptr_reg + n16;
            end else if (last_wd) begin
                // the next A row, or the B tile, or the next BT column: each contiguous
                ld_t_next = 8'd0;
                ld_r_next = ld_r_reg + 8'd1;
                if (last_a) begin
                    rd_ptr_next  = b_tile_reg;
                    row_ptr_next = b_tile_reg;
                end else begin
                    rd_ptr_next  = row_ptr_reg + k16;
                    row_ptr_next = row_ptr_reg + k16;
                end
            end else begin
                ld_t_next   = ld_t_reg + N16[7:0];
                rd_ptr_next = rd_ptr_reg + N16;
            end
            if (last_ld) begin
                state_next = S_LOAD_END;
            end
        end

        S_LOAD_END: begin
            beat_next  = 16'd0;
            state_next = S_COMP;
        end

        S_COMP: begin
            beat_next = beat_reg + 16'd1;
            if (comp_end) begin
                wr_r_next       = 8'd0;
                wr_col_next     = 8'd0;
                wr_ptr_next     = c_row_reg + {8'd0, j0_reg};
                wr_row_ptr_next = c_row_reg + {8'd0, j0_reg};
                state_next      = S_WRITE;
            end
        end

        S_WRITE: begin
            if (wr_row_end) begin
                wr_col_next     = 8'd0;
                wr_r_next       = wr_r_reg + 8'd1;
                wr_ptr_next     = wr_row_ptr_reg + n16;
                wr_row_ptr_next = wr_row_ptr_reg + n16;
            end else begin
                wr_col_next = wr_col_reg + 8'd1;
                wr_ptr_next = wr_ptr_reg + 16'd1;
            end
            if (wr_tile_end) begin
                ld_r_next = 8'd0;
                ld_t_next = 8'd0;
                if (more_j) begin
                    // next tile to the right
                    j0_next     = j0_reg + N16[7:0];
                    b_tile_next  = b_tile_reg + (bt ? n_k : N16);
                    rd_ptr_next  = a_tile_reg;
                    row_ptr_next = a_tile_reg;
                    state_next   = S_LOAD;
                end else if (more_i) begin
                    // first tile of the next tile row
                    i0_next     = i0_reg + N16[7:0];
                    j0_next     = 8'd0;
                    a_tile_next = a_tile_reg + n_k;
                    b_tile_next = cmd_b;
                    c_row_next   = c_row_reg + N16 * n16;
                    rd_ptr_next  = a_tile_reg + n_k;
                    row_ptr_next = a_tile_reg + n_k;
                    state_next   = S_LOAD;
                end else begin
                    state_next  = S_IDLE;
                end
            end
        end

        /* verilator coverage_off */    // unreachable: state_reg holds only the states above
        default: begin
            state_next = S_IDLE;
        end
        /* verilator coverage_on */
    endcase
end

always @(posedge clk) begin
    if (rst) begin
        state_reg      <= S_IDLE;
        i0_reg         <= 8'd0;
        j0_reg         <= 8'd0;
        a_tile_reg     <= 16'd0;
        b_tile_reg     <= 16'd0;
        c_row_reg      <= 16'd0;
        ld_r_reg       <= 8'd0;
        ld_t_reg       <= 8'd0;
        rd_ptr_reg     <= 16'd0;
        row_ptr_reg    <= 16'd0;
        bw_valid_reg   <= 1'b0;
        bw_is_b_reg    <= 1'b0;
        bw_wide_reg    <= 1'b0;
        bw_idx_reg     <= 8'd0;
        bw_t_reg       <= 8'd0;
        bw_lanes_reg   <= {ARRAY_N{1'b0}};
        beat_reg       <= 16'd0;
        wr_r_reg       <= 8'd0;
        wr_col_reg     <= 8'd0;
        wr_ptr_reg     <= 16'd0;
        wr_row_ptr_reg <= 16'd0;
    end else if (state_reg != S_IDLE || cmd_matmul) begin
        // (idle and not started, every next value is the register's own (bw_valid_reg is 0 past
        // S_LOAD): on Icarus every register copied costs, and the unit is idle most cycles)
        state_reg      <= state_next;
        i0_reg         <= i0_next;
        j0_reg         <= j0_next;
        a_tile_reg     <= a_tile_next;
        b_tile_reg     <= b_tile_next;
        c_row_reg      <= c_row_next;
        ld_r_reg       <= ld_r_next;
        ld_t_reg       <= ld_t_next;
        rd_ptr_reg     <= rd_ptr_next;
        row_ptr_reg    <= row_ptr_next;
        bw_valid_reg   <= bw_valid_next;
        bw_is_b_reg    <= bw_is_b_next;
        bw_wide_reg    <= bw_wide_next;
        bw_idx_reg     <= bw_idx_next;
        bw_t_reg       <= bw_t_next;
        bw_lanes_reg   <= bw_lanes_next;
        beat_reg       <= beat_next;
        wr_r_reg       <= wr_r_next;
        wr_col_reg     <= wr_col_next;
        wr_ptr_reg     <= wr_ptr_next;
        wr_row_ptr_reg <= wr_row_ptr_next;
    end
end

// ---------------------------------------------------------------------------------------------
// tile buffers and the systolic array

wire                 comp = (state_reg == S_COMP);
wire [15:0]          acc_idx = {8'd0, wr_r_reg} * N16 + {8'd0, wr_col_reg};    // written now
wire [31:0]          acc_sel;    // its accumulator
wire [8*ARRAY_N-1:0] a_feed;     // the array's row inputs this beat
wire [8*ARRAY_N-1:0] b_feed;     // the array's column inputs this beat

wire [8*ARRAY_N-1:0] read_bytes;    // the int8 of each word read last cycle

genvar r;
generate
    for (r = 0; r < ARRAY_N; r = r + 1) begin : g_lane
        localparam [15:0] R16 = r;
        assign lanes_left[r]           = (ld_t + R16 < k16);
        assign read_bytes[8*r +: 8]    = sram_rdata[32*r +: 8];
        wire unused_word_bits = &{1'b0, sram_rdata[32*r+8 +: 24]};    // int8 words
    end

    for (r = 0; r < ARRAY_N; r = r + 1) begin : g_buf
        localparam [15:0] R16 = r;    // this row of A / column of B

        // row r of the array in beat t gets A[r][t - r]; column r gets B[t - r][r]
        wire [15:0] t      = feed_t - R16;
        wire        a_live = comp && (beat_reg > R16) && (t < k16) && (R16 < mr);
        wire        b_live = comp && (beat_reg > R16) && (t < k16) && (R16 < nc);
        wire [7:0]  a_word;
        wire [7:0]  b_word;

        // the words read last cycle: all to this buffer, or (a row-major B's tile row) word r
        wire             a_fill = bw_valid_reg && !bw_is_b_reg && (bw_idx_reg == R16[7:0]);
        wire             b_fill = bw_valid_reg && bw_is_b_reg && (bw_idx_reg == R16[7:0]);
        wire [ARRAY_N-1:0] b_lanes = bw_wide_reg ? (b_fill ? bw_lanes_reg : {ARRAY_N{1'b0}})
                                                 : {{(ARRAY_N-1){1'b0}}, bw_valid_reg && bw_is_b_reg};
        wire [8*ARRAY_N-1:0] b_words = bw_wide_reg ? read_bytes
                                                   : {{(8*ARRAY_N-8){1'b0}}, read_bytes[8*r +: 8]};

        tile_buffer #(
            .LANES (ARRAY_N),
            .DEPTH (K_MAX)
        ) u_a_row (
            .clk      (clk),
            .wr_lanes (a_fill ? bw_lanes_reg : {ARRAY_N{1'b0}}),
            .wr_addr  (bw_t_reg[KAW-1:0]),
            .wr_data  (read_bytes),
            .rd_addr  (t[KAW-1:0]),
            .rd_data  (a_word)
        );

        tile_buffer #(
            .LANES (ARRAY_N),
            .DEPTH (K_MAX)
        ) u_b_col (
            .clk      (clk),
            .wr_lanes (b_lanes),
            .wr_addr  (bw_t_reg[KAW-1:0]),
            .wr_data  (b_words),
            .rd_addr  (t[KAW-1:0]),
            .rd_data  (b_word)
        );

        assign a_feed[8*r +: 8] = a_live ? a_word : 8'd0;
        assign b_feed[8*r +: 8] = b_live ? b_word : 8'd0;

        // t < k <= K_MAX whenever it is used: the buffer address needs its low KAW bits only
        wire unused_t = &{1'b0, t[15:KAW]};
    end
endgenerate

systolic_array #(
    .ARRAY_N (ARRAY_N)
) u_array (
    .clk     (clk),
    .rst     (rst),
    .clear   (comp && (beat_reg == 16'd0)),
    .en      (comp && (beat_reg != 16'd0)),
    .a_in    (a_feed),
    .b_in    (b_feed),
    .acc_idx (acc_idx[$clog2(ARRAY_N * ARRAY_N + 1) - 1:0]),    // at most ARRAY_N * ARRAY_N
    .acc_rd  (acc_sel)
);

// ---------------------------------------------------------------------------------------------
// write-back

wire [7:0] rq_y;
wire       rq_sat;

requant u_requant (
    .x     (acc_sel),
    .mult  (cmd_mult),
    .shift (cmd_shift),
    .y     (rq_y),
    .sat   (rq_sat)
);

wire writing = (state_reg == S_WRITE);
wire [16:0] rd_ptr_w = {1'b0, rd_ptr_reg};
wire [16:0] wr_ptr_w = {1'b0, wr_ptr_reg};

assign done       = writing && wr_tile_end && !more_j && !more_i;
assign sat        = writing && !raw && rq_sat;
assign sram_raddr = rd_ptr_w[SRAM_AW-1:0];
assign sram_we    = writing;
assign sram_waddr = wr_ptr_w[SRAM_AW-1:0];
assign sram_wdata = raw ? acc_sel : {{24{rq_y[7]}}, rq_y};

wire unused_matrix_unit = &{1'b0, acc_idx[15:$clog2(ARRAY_N * ARRAY_N + 1)], cmd_flags[7:2], b_col[15:8],
                            rd_ptr_w[16:SRAM_AW], wr_ptr_w[16:SRAM_AW]};

endmodule

`default_nettype wire
