`default_nettype none
`include "chip_defs.vh"
// pdma_harness: the cocotb toplevel of the paged DMA's block test: pdma wired to the external
// memory (ext_memory.v: the memory interface unit on an axi_ram, the ideal memory unless
// plusargs say otherwise, with the protocol checker on the AXI port), to an SRAM (read port A,
// the write port) and to a paged_geometry of the command's fields, as chip_top and the
// controller wire them.
//
// A test backdoor-writes u_ext.u_mem.mem[i] (the pool, the block tables) and u_sram.mem[i],
// raises one of cmd_pload, cmd_pstore, cmd_pcopy for one cycle with the fields held (cmd_copy
// too, as the controller holds it from the opcode), waits for done and reads both memories
// back through the backdoor. The harness logs every word written to
// either memory with its cycle since the command (u_sram_writes, u_ext_writes: write_log.v),
// and counts what happened, cleared by any command: table words the unit received
// (n_table_words), words it reported moved (n_data_words) and the cycles the unit raised
// `fault` (n_faults: 1 after a stop on BAD_PAGE, else 0).
// axi_violations is 0 while the port kept every rule (axi_checker.v).
module pdma_harness #(
    parameter SRAM_WORDS = `SRAM_WORDS_DEFAULT,    // SRAM words
    parameter EXT_WORDS  = `EXT_WORDS_DEFAULT,     // external memory words
    parameter EXT_LAT    = `EXT_LAT_DEFAULT        // the ideal memory's read latency
) (
    input  wire        clk,
    input  wire        rst,

    input  wire        cmd_pload,
    input  wire        cmd_pstore,
    input  wire        cmd_pcopy,
    input  wire [15:0] cmd_table,
    input  wire [15:0] cmd_sram,
    input  wire [15:0] cmd_pool,
    input  wire [7:0]  cmd_row_words,
    input  wire [15:0] cmd_len,
    input  wire [7:0]  cmd_page_shift,
    input  wire [15:0] cmd_row,
    input  wire [15:0] cmd_pages,
    input  wire        cmd_copy,
    output wire        done,

    output reg  [31:0] n_table_words,
    output reg  [31:0] n_data_words,
    output reg  [31:0] n_faults,
    output wire        stall,
    output wire        bus_err,

    output wire [31:0] axi_violations,
    output wire [31:0] axi_first_cycle,
    output wire [2:0]  axi_first_channel,
    output wire [3:0]  axi_first_rule,
    output wire [6*32-1:0] mem_stalls
);

localparam SRAM_AW = $clog2(SRAM_WORDS);

wire [15:0]        stream_addr, stream_len;
wire               rd_cmd, rd_valid, wr_cmd, wr_push, fence, fence_done;
wire [31:0]        rd_data, wr_data;
wire [SRAM_AW-1:0] sram_raddr, sram_waddr;
wire [31:0]        sram_rdata, sram_wdata, sram_rdata_b;
wire               sram_we, table_word, data_word, fault;

wire starting = cmd_pload || cmd_pstore || cmd_pcopy;

// the command's paged geometry, as the controller's instance gives it to the chip's pdma
wire [15:0] page_rows, first_entry;
wire [23:0] words;
wire [31:0] entries, table_span;
wire [47:0] pool_words;
wire        size_bad;

paged_geometry u_geometry (
    .copy        (cmd_copy),
    .row_words   (cmd_row_words),
    .len         (cmd_len),
    .page_shift  (cmd_page_shift),
    .row         (cmd_row),
    .pages       (cmd_pages),
    .page_rows   (page_rows),
    .words       (words),
    .first_entry (first_entry),
    .entries     (entries),
    .table_span  (table_span),
    .pool_words  (pool_words),
    .size_bad    (size_bad)
);

pdma #(
    .SRAM_AW (SRAM_AW)
) u_pdma (
    .clk            (clk),
    .rst            (rst),
    .stall          (stall),
    .cmd_pload      (cmd_pload),
    .cmd_pstore     (cmd_pstore),
    .cmd_pcopy      (cmd_pcopy),
    .cmd_table      (cmd_table),
    .cmd_sram       (cmd_sram),
    .cmd_pool       (cmd_pool),
    .cmd_row_words  (cmd_row_words),
    .cmd_len        (cmd_len),
    .cmd_page_shift (cmd_page_shift),
    .cmd_row        (cmd_row),
    .cmd_pages      (cmd_pages),
    .cmd_page_rows  (page_rows),
    .cmd_words      (words),
    .cmd_first_entry (first_entry),
    .cmd_entries    (entries),
    .done           (done),
    .fault          (fault),
    .table_word     (table_word),
    .data_word      (data_word),
    .mem_addr       (stream_addr),
    .mem_len        (stream_len),
    .rd_cmd         (rd_cmd),
    .rd_valid       (rd_valid),
    .rd_data        (rd_data),
    .wr_cmd         (wr_cmd),
    .wr_push        (wr_push),
    .wr_data        (wr_data),
    .fence          (fence),
    .fence_done     (fence_done),
    .sram_raddr     (sram_raddr),
    .sram_rdata     (sram_rdata),
    .sram_we        (sram_we),
    .sram_waddr     (sram_waddr),
    .sram_wdata     (sram_wdata)
);

wire        w_event;
wire [15:0] w_event_addr;
wire [31:0] w_event_data;

ext_memory #(
    .EXT_WORDS (EXT_WORDS),
    .EXT_LAT   (EXT_LAT)
) u_ext (
    .clk               (clk),
    .rst               (rst),
    .stall             (stall),
    .bus_err           (bus_err),
    .addr              (stream_addr),
    .len               (stream_len),
    .rd_cmd            (rd_cmd),
    .rd_valid          (rd_valid),
    .rd_data           (rd_data),
    .wr_cmd            (wr_cmd),
    .wr_push           (wr_push),
    .wr_data           (wr_data),
    .fence             (fence),
    .fence_done        (fence_done),
    .w_event           (w_event),
    .w_event_addr      (w_event_addr),
    .w_event_data      (w_event_data),
    .axi_violations    (axi_violations),
    .axi_first_cycle   (axi_first_cycle),
    .axi_first_channel (axi_first_channel),
    .axi_first_rule    (axi_first_rule),
    .mem_stalls        (mem_stalls)
);

wire sram_write = sram_we && !stall;    // a stalled cycle writes nothing

wire               sram_a_bad, sram_b_bad;    // the parity checks' (no fault here)
sram #(
    .SRAM_WORDS (SRAM_WORDS)
) u_sram (
    .clk       (clk),
    .rd_a_addr (sram_raddr),
    .rd_a_data (sram_rdata),
    .rd_a_bad  (sram_a_bad),
    .rd_b_addr ({SRAM_AW{1'b0}}),
    .rd_b_data (sram_rdata_b),
    .rd_b_bad  (sram_b_bad),
    .wr_en     (sram_write),
    .wr_addr   (sram_waddr),
    .wr_data   (sram_wdata)
);

// every word written, with its cycle since the command (write_log.v): to the SRAM as it stores
// it, and to the external memory as axi_ram.v stores it
write_log #(
    .ADDR_W (SRAM_AW),
    .DEPTH  (SRAM_WORDS)    // a command writes at most SRAM_WORDS words to either memory
) u_sram_writes (
    .clk   (clk),
    .rst   (rst),
    .start (starting),
    .we    (sram_write),
    .addr  (sram_waddr),
    .data  (sram_wdata)
);

write_log #(
    .ADDR_W (16),
    .DEPTH  (SRAM_WORDS)
) u_ext_writes (
    .clk   (clk),
    .rst   (rst),
    .start (starting),
    .we    (w_event),
    .addr  (w_event_addr),
    .data  (w_event_data)
);

always @(posedge clk) begin
    if (rst || starting) begin
        n_table_words <= 32'd0;
        n_data_words  <= 32'd0;
        n_faults      <= 32'd0;
    end else begin
        n_table_words <= n_table_words + {31'd0, table_word};
        n_data_words  <= n_data_words + {31'd0, data_word};
        n_faults      <= n_faults + {31'd0, fault};
    end
end

// the tests give commands the controller's checks pass
wire unused_pdma_harness = &{1'b0, sram_rdata_b, table_span, pool_words, size_bad, sram_a_bad, sram_b_bad};

endmodule

`default_nettype wire
