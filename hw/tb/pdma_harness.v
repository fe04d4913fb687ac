`default_nettype none
`include "chip_defs.vh"
// pdma_harness: the cocotb toplevel of the paged DMA's block test: pdma wired to ext_mem (the
// external memory port) and to an SRAM (read port A, the write port), as chip_top wires them.
//
// A test backdoor-writes u_mem.mem[i] (the pool, the block tables) and u_sram.mem[i], raises
// one of cmd_pload, cmd_pstore, cmd_pcopy for one cycle with the fields held (cmd_copy too, as
// the controller holds it from the opcode), waits for done
// and reads both memories back through the backdoor. The harness counts what happened, cleared
// by any command: table words the unit received (n_table_words), words it reported moved
// (n_data_words), writes on the external port (n_ext_writes) and to the SRAM (n_sram_writes),
// and the cycles the unit raised `fault` (n_faults: 1 after a stop on BAD_PAGE, else 0).
module pdma_harness #(
    parameter SRAM_WORDS = `SRAM_WORDS_DEFAULT,    // SRAM words
    parameter EXT_WORDS  = `EXT_WORDS_DEFAULT,     // external memory words
    parameter EXT_LAT    = `EXT_LAT_DEFAULT        // external read latency
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
    output reg  [31:0] n_ext_writes,
    output reg  [31:0] n_sram_writes,
    output reg  [31:0] n_faults
);

localparam SRAM_AW = $clog2(SRAM_WORDS);

wire               mem_req, mem_we, mem_rvalid;
wire [15:0]        mem_addr;
wire [31:0]        mem_wdata, mem_rdata;
wire [SRAM_AW-1:0] sram_raddr, sram_waddr;
wire [31:0]        sram_rdata, sram_wdata, sram_rdata_b;
wire               sram_we, table_word, data_word, fault;

wire starting = cmd_pload || cmd_pstore || cmd_pcopy;

pdma #(
    .SRAM_AW (SRAM_AW),
    .EXT_LAT (EXT_LAT)
) u_pdma (
    .clk            (clk),
    .rst            (rst),
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
    .cmd_copy       (cmd_copy),
    .done           (done),
    .fault          (fault),
    .table_word     (table_word),
    .data_word      (data_word),
    .mem_req        (mem_req),
    .mem_we         (mem_we),
    .mem_addr       (mem_addr),
    .mem_wdata      (mem_wdata),
    .mem_rvalid     (mem_rvalid),
    .mem_rdata      (mem_rdata),
    .sram_raddr     (sram_raddr),
    .sram_rdata     (sram_rdata),
    .sram_we        (sram_we),
    .sram_waddr     (sram_waddr),
    .sram_wdata     (sram_wdata)
);

ext_mem #(
    .WORDS (EXT_WORDS),
    .LAT   (EXT_LAT)
) u_mem (
    .clk    (clk),
    .rst    (rst),
    .req    (mem_req),
    .we     (mem_we),
    .addr   (mem_addr),
    .wdata  (mem_wdata),
    .rvalid (mem_rvalid),
    .rdata  (mem_rdata)
);

sram #(
    .SRAM_WORDS (SRAM_WORDS)
) u_sram (
    .clk       (clk),
    .rd_a_addr (sram_raddr),
    .rd_a_data (sram_rdata),
    .rd_b_addr ({SRAM_AW{1'b0}}),
    .rd_b_data (sram_rdata_b),
    .wr_en     (sram_we),
    .wr_addr   (sram_waddr),
    .wr_data   (sram_wdata)
);

always @(posedge clk) begin
    if (rst || starting) begin
        n_table_words <= 32'd0;
        n_data_words  <= 32'd0;
        n_ext_writes  <= 32'd0;
        n_sram_writes <= 32'd0;
        n_faults      <= 32'd0;
    end else begin
        n_table_words <= n_table_words + {31'd0, table_word};
        n_data_words  <= n_data_words + {31'd0, data_word};
        n_ext_writes  <= n_ext_writes + {31'd0, mem_req && mem_we};
        n_sram_writes <= n_sram_writes + {31'd0, sram_we};
        n_faults      <= n_faults + {31'd0, fault};
    end
end

wire unused_pdma_harness = &{1'b0, sram_rdata_b};

endmodule

`default_nettype wire
