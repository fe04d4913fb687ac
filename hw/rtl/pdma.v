`default_nettype none
`include "chip_defs.vh"
// pdma: the paged DMA: PLOAD, PSTORE and PCOPY (hw/ISA.md, "Paged instructions"), rows of a
// KV pool in external memory read and written through a block table, one level of indirection.
//
// It reads and writes through the memory interface unit (mem_if.v), which keeps the ideal
// memory's schedule; the unit counts no latency of its own. Cycle 0 is the cycle after the
// one-cycle command (E = the entries read, n the words moved: the command's paged geometry,
// from the controller's paged_geometry; the cycles in brackets are the ideal memory's,
// L = EXT_LAT). The states:
//
//   HEADER, ENTRIES, TABLE
//           cycle 0 (HEADER) commands a read stream of the header (PCOPY: the source page),
//           cycle 1 (ENTRIES) one of the E entries (PCOPY: the destination page). The first
//           E + 1 words to arrive are these (the first of them L + 2 >= 3 cycles after cycle 0,
//           in TABLE): the header into first_reg, each entry into the entry buffer (a rowmem of
//           PT_ENTRIES), each one checked as it arrives. With the last [cycle E + L + 2] comes
//           the verdict: with a bad one (BAD_PAGE) the unit raises done and fault there, having
//           written nothing.
//   LOAD    (PLOAD; PCOPY's first half) from the cycle after the verdict, steps one word a cycle
//           and commands one read stream per row, in the cycle of the row's first word; each
//           word is written to sram[b + i] in the cycle it arrives.
//   STORE   (PSTORE; PCOPY's second half, from the cycle after its last load word) reads
//           sram[b + i] in one cycle and pushes the word to its pool address in the next, one
//           write stream per row, commanded with the row's first push, a fence with the last
//           push. A PSTORE's first read is in the verdict's cycle, its first push after it.
//   FENCE   every word pushed: done when the fence completes.
//
// In a cycle with `stall` high nothing changes, and the unit presents the SRAM read address of
// the cycle before again, so that the SRAM's registered read port still holds the word a store
// is about to push.
//
// A row's pool address is c + (page * P + slot) * row_words + column, the page from the entry
// buffer (PCOPY: the source or the destination page), the slot and the table page from the
// row's position first + row + i: a shift and a mask. The command fields are held stable by the
// controller while the instruction runs.
module pdma #(
    parameter SRAM_AW = 12                  // SRAM address width
) (
    input  wire               clk,
    input  wire               rst,
    input  wire               stall,          // the memory interface unit freezes this cycle

    // command
    input  wire               cmd_pload,      // one cycle: start a PLOAD
    input  wire               cmd_pstore,     // one cycle: start a PSTORE
    input  wire               cmd_pcopy,      // one cycle: start a PCOPY
    input  wire [15:0]        cmd_table,      // a: the block table (PCOPY: the page pair)
    input  wire [15:0]        cmd_sram,       // b: the scratchpad rows
    input  wire [15:0]        cmd_pool,       // c: page 0 of the pool
    input  wire [7:0]         cmd_row_words,
    input  wire [15:0]        cmd_len,        // rows
    input  wire [7:0]         cmd_page_shift,
    input  wire [15:0]        cmd_row,        // the first table row (PCOPY: slot)
    input  wire [15:0]        cmd_pages,      // the pool's pages
    // .. and the instruction's paged geometry (paged_geometry.v, the controller's instance)
    input  wire [15:0]        cmd_page_rows,  // P
    input  wire [23:0]        cmd_words,      // n, the words moved
    input  wire [15:0]        cmd_first_entry,
    input  wire [31:0]        cmd_entries,    // E, the entries read
    output wire               done,           // high in the last cycle of the instruction
    output wire               fault,          // with done: stopped on BAD_PAGE
    output wire               table_word,     // a block-table word arrived this cycle
    output wire               data_word,      // a word reached its destination this cycle

    // the memory interface unit
    output wire [15:0]        mem_addr,       // the stream's address and length (read or write)
    output wire [15:0]        mem_len,
    output wire               rd_cmd,
    input  wire               rd_valid,
    input  wire [31:0]        rd_data,
    output wire               wr_cmd,
    output wire               wr_push,
    output wire [31:0]        wr_data,
    output wire               fence,
    input  wire               fence_done,

    // SRAM
    output wire [SRAM_AW-1:0] sram_raddr,
    input  wire [31:0]        sram_rdata,
    output wire               sram_we,
    output wire [SRAM_AW-1:0] sram_waddr,
    output wire [31:0]        sram_wdata
);

localparam ENTRY_AW = $clog2(`PT_ENTRIES);    // entry buffer address width

localparam [2:0] S_IDLE    = 3'd0;
localparam [2:0] S_HEADER  = 3'd1;    // cycle 0: the header's read stream (PCOPY: source page)
localparam [2:0] S_ENTRIES = 3'd2;    // cycle 1: the entries' (PCOPY: destination page)
localparam [2:0] S_TABLE   = 3'd3;    // the table words arrive, up to the verdict
localparam [2:0] S_LOAD    = 3'd4;    // rows read into the scratchpad
localparam [2:0] S_STORE   = 3'd5;    // rows written from the scratchpad to the pool
localparam [2:0] S_FENCE   = 3'd6;    // every word pushed, waiting for the fence

// ---------------------------------------------------------------------------------------------
// geometry of the held instruction

wire [3:0]  sh       = cmd_page_shift[3:0];
wire [31:0] mask     = {16'd0, cmd_page_rows} - 32'd1;
wire [31:0] pages_32 = {16'd0, cmd_pages};
wire [31:0] n_32     = {8'd0, cmd_words};

// ---------------------------------------------------------------------------------------------
// state

reg [2:0]           state_reg,  state_next;
reg [`OPCODE_W-1:0] op_reg,     op_next;        // the instruction: PLOAD, PSTORE or PCOPY
reg [31:0]          trsp_reg,   trsp_next;      // table words arrived
reg [15:0]          first_reg,  first_next;     // the header (PCOPY: the source page)
reg [15:0]          dst_reg,    dst_next;       // PCOPY: the destination page
reg                 bad_reg,    bad_next;       // a table word arrived bad
reg [31:0]          drow_reg,   drow_next;      // data side: the row of the next word moved
reg [7:0]           dcol_reg,   dcol_next;      // .. its column
reg [31:0]          dcount_reg, dcount_next;    // .. words read (load) or written (store) so far
reg [31:0]          lrsp_reg,   lrsp_next;      // load words arrived
reg [31:0]          sread_reg,  sread_next;     // store: SRAM words read
reg                 pend_reg,   pend_next;      // store: the word read last cycle is on rdata
reg [SRAM_AW-1:0]   raddr_reg;                  // the SRAM read address of the cycle before

wire starting = cmd_pload || cmd_pstore || cmd_pcopy;
wire pload    = (op_reg == `OP_PLOAD);
wire pstore   = (op_reg == `OP_PSTORE);
wire copy     = (op_reg == `OP_PCOPY);
wire storing  = (state_reg == S_STORE);

// ---------------------------------------------------------------------------------------------
// table words

wire        table_issue = (state_reg == S_HEADER) || (state_reg == S_ENTRIES);
wire        in_table    = table_issue || (state_reg == S_TABLE);
wire [15:0] table_addr  = (state_reg == S_HEADER) ? cmd_table
                                                  : (cmd_table + cmd_first_entry + 16'd1);
wire [15:0] table_len   = (state_reg == S_HEADER) ? 16'd1 : cmd_entries[15:0];
wire        table_rsp   = in_table && rd_valid;
wire        table_last  = table_rsp && (trsp_reg == cmd_entries);
// a table word; 0 outside the table's words (the read data changes in most cycles, and on Icarus
// each change would run the next-state block)
wire [15:0] table_data  = rd_data[15:0] & {16{in_table}};
wire [31:0] entry_index = trsp_reg - 32'd1;    // the entry arriving (trsp_reg >= 1)

// the entries the rows use: table pages (first + row) >> sh .. (first + row + len - 1) >> sh
wire [31:0] pos_first = {16'd0, first_reg} + {16'd0, cmd_row};
wire [31:0] pos_last  = pos_first + {16'd0, cmd_len} - 32'd1;
wire [31:0] used_lo   = (pos_first >> sh) - {16'd0, cmd_first_entry};
wire [31:0] used_hi   = (pos_last >> sh) - {16'd0, cmd_first_entry};
wire        used      = (entry_index >= used_lo) && (entry_index <= used_hi);

wire page_bad   = (rd_data >= pages_32);
wire header_bad = !copy && (rd_data > mask);
wire rsp_bad    = table_rsp && ((trsp_reg == 32'd0) ? (copy ? page_bad : header_bad)
                                                     : ((copy || used) && page_bad));

assign fault = table_last && (bad_reg || rsp_bad);

wire [ENTRY_AW-1:0] entry_waddr = entry_index[ENTRY_AW-1:0];
wire                entry_we    = table_rsp && !copy && (trsp_reg != 32'd0);

// ---------------------------------------------------------------------------------------------
// data side: the pool address of row drow_reg, column dcol_reg

wire [31:0]         pos        = pos_first + drow_reg;
wire [31:0]         rel_entry  = (pos >> sh) - {16'd0, cmd_first_entry};
wire [ENTRY_AW-1:0] entry_raddr = rel_entry[ENTRY_AW-1:0];
wire [15:0]         entry_page;
`ifdef FORMAL    // the entry buffer's words, for the invariants (hw/formal)
wire [16*`PT_ENTRIES-1:0] f_entry_words;
`endif

rowmem #(
    .WIDTH (16),
    .DEPTH (`PT_ENTRIES)
) u_entries (
    .clk     (clk),
    .wr_en   (entry_we),
    .wr_addr (entry_waddr),
    .wr_data (rd_data[15:0]),
    .rd_addr (entry_raddr),
`ifdef FORMAL
    .f_words (f_entry_words),
`endif
    .rd_data (entry_page)
);

wire [15:0] page      = copy ? (storing ? dst_reg : first_reg) : entry_page;
wire [31:0] slot      = copy ? ({16'd0, cmd_row} + drow_reg) : (pos & mask);
wire [31:0] phys_row  = ({16'd0, page} << sh) | slot;
wire [39:0] row_start = {8'd0, phys_row} * {32'd0, cmd_row_words};
wire [15:0] pool_addr = cmd_pool + row_start[15:0] + {8'd0, dcol_reg};
wire        row_end   = (dcol_reg == cmd_row_words - 8'd1);

wire ld_issue = (state_reg == S_LOAD) && (dcount_reg != n_32);
wire ld_rsp   = (state_reg == S_LOAD) && rd_valid;
wire ld_last  = ld_rsp && (lrsp_reg == n_32 - 32'd1);

// a PSTORE reads its first word in the verdict's cycle (table_last)
wire st_read  = (storing || (table_last && pstore)) && (sread_reg != n_32);
wire st_write = storing && pend_reg;
wire st_last  = st_write && (dcount_reg == n_32 - 32'd1);
wire row_first = (dcol_reg == 8'd0);

wire data_step = ld_issue || st_write;    // the data side moves to the next word

assign done = fault || (ld_last && pload) || ((state_reg == S_FENCE) && fence_done);

// ---------------------------------------------------------------------------------------------
// ports

assign mem_addr   = table_issue ? table_addr : pool_addr;
assign mem_len    = table_issue ? table_len : {8'd0, cmd_row_words};
assign rd_cmd     = table_issue || (ld_issue && row_first);
assign wr_cmd     = st_write && row_first;
assign wr_push    = st_write;
assign wr_data    = sram_rdata;
assign fence      = st_last;

wire [31:0] sram_wr = {16'd0, cmd_sram} + lrsp_reg;
wire [31:0] sram_rd = {16'd0, cmd_sram} + sread_reg;

assign sram_we    = ld_rsp;
assign sram_waddr = sram_wr[SRAM_AW-1:0];
assign sram_wdata = rd_data;
assign sram_raddr = stall ? raddr_reg : sram_rd[SRAM_AW-1:0];

assign table_word = table_rsp;
assign data_word  = (ld_rsp && pload) || st_write;

// ---------------------------------------------------------------------------------------------
// next state

always @* begin
    state_next  = state_reg;
    op_next     = op_reg;
    trsp_next   = trsp_reg;
    first_next  = first_reg;
    dst_next    = dst_reg;
    bad_next    = bad_reg;
    drow_next   = drow_reg;
    dcol_next   = dcol_reg;
    dcount_next = dcount_reg;
    lrsp_next   = lrsp_reg;
    sread_next  = sread_reg;
    pend_next   = st_read;

    if (table_rsp) begin
        trsp_next = trsp_reg + 32'd1;
        bad_next  = bad_reg || rsp_bad;
        if (trsp_reg == 32'd0) begin
            first_next = table_data;
        end else if (copy) begin
            dst_next = table_data;
        end
    end
    if (data_step) begin
        dcount_next = dcount_reg + 32'd1;
        dcol_next   = row_end ? 8'd0 : dcol_reg + 8'd1;
        drow_next   = row_end ? drow_reg + 32'd1 : drow_reg;
    end
    if (ld_rsp) begin
        lrsp_next = lrsp_reg + 32'd1;
    end
    if (st_read) begin
        sread_next = sread_reg + 32'd1;
    end

    case (state_reg)
        S_IDLE: begin
            if (starting) begin
                state_next  = S_HEADER;
                op_next     = cmd_pload ? `OP_PLOAD : (cmd_pstore ? `OP_PSTORE : `OP_PCOPY);
                trsp_next   = 32'd0;
                bad_next    = 1'b0;
                drow_next   = 32'd0;
                dcol_next   = 8'd0;
                dcount_next = 32'd0;
                lrsp_next   = 32'd0;
                sread_next  = 32'd0;
            end
        end
        S_HEADER: begin
            state_next = S_ENTRIES;
        end
        S_ENTRIES: begin
            state_next = S_TABLE;
        end
        S_TABLE: begin
            if (fault) begin
                state_next = S_IDLE;    // BAD_PAGE: nothing written
            end else if (table_last) begin
                state_next = pstore ? S_STORE : S_LOAD;
            end
        end
        S_LOAD: begin
            if (ld_last && copy) begin    // PCOPY: every source word is in the scratchpad
                state_next  = S_STORE;
                drow_next   = 32'd0;
                dcol_next   = 8'd0;
                dcount_next = 32'd0;
            end else if (ld_last) begin
                state_next = S_IDLE;
            end
        end
        S_STORE: begin
            if (st_last) begin
                state_next = S_FENCE;
            end
        end
        S_FENCE: begin
            if (fence_done) begin
                state_next = S_IDLE;
            end
        end
        /* verilator coverage_off */    // unreachable: state_reg holds only the states above
        default: begin
            state_next = S_IDLE;
        end
        /* verilator coverage_on */
    endcase
end

// ---------------------------------------------------------------------------------------------
// registers (a stalled cycle changes nothing; an idle one without a command neither: on Icarus
// every register copied costs, and the unit is idle most cycles)

always @(posedge clk) begin
    raddr_reg <= sram_raddr;    // every cycle, stalled or not
    if (rst) begin
        state_reg  <= S_IDLE;
        op_reg     <= `OP_PLOAD;
        trsp_reg   <= 32'd0;
        first_reg  <= 16'd0;
        dst_reg    <= 16'd0;
        bad_reg    <= 1'b0;
        drow_reg   <= 32'd0;
        dcol_reg   <= 8'd0;
        dcount_reg <= 32'd0;
        lrsp_reg   <= 32'd0;
        sread_reg  <= 32'd0;
        pend_reg   <= 1'b0;
    end else if (!stall && (state_reg != S_IDLE || starting)) begin
        state_reg  <= state_next;
        op_reg     <= op_next;
        trsp_reg   <= trsp_next;
        first_reg  <= first_next;
        dst_reg    <= dst_next;
        bad_reg    <= bad_next;
        drow_reg   <= drow_next;
        dcol_reg   <= dcol_next;
        dcount_reg <= dcount_next;
        lrsp_reg   <= lrsp_next;
        sread_reg  <= sread_next;
        pend_reg   <= pend_next;
    end
end

// the controller checks the sizes (page_shift <= PAGE_SHIFT_MAX = 15) and the table's and
// pool's extents before the command
wire unused_pdma = &{1'b0, cmd_page_shift[7:4], row_start[39:16], rel_entry[31:ENTRY_AW],
                     sram_wr[31:SRAM_AW], sram_rd[31:SRAM_AW]};

`ifdef FORMAL    // the formal flow's invariants of this unit's registers (hw/formal)
`include "pdma_invariants.vh"
`endif

endmodule

`default_nettype wire
